//! The skills extension on the client (SEP-2640): the skills a server lists, one skill's entry
//! by URI, a directory's children — and loading a skill, verified: its files are fetched only
//! when asked for (never on connection or listing), and checked against the skill's entry
//! (size, digest, and the `SKILL.md`'s frontmatter) before they are handed out.

use base64::Engine as _;
use mcp_types::extensions::skills::{
    GetSkill, GetSkillParams, ListSkillsResult, ReadDirectory, ReadDirectoryParams, ReadDirectoryResult,
    SkillEntry,
};
use mcp_types::{JsonObject, Resource, ResourceContents};

use super::calls::{all_pages, cursor_params};
use super::{Client, RequestOptions, decode};
use crate::error::ClientError;

/// A skill loaded: its `SKILL.md` as read and verified, and its frontmatter.
#[derive(Debug, Clone)]
pub struct LoadedSkill {
    /// The skill's entry (what was verified against).
    pub entry: SkillEntry,
    /// The `SKILL.md`.
    pub text: String,
    /// Its frontmatter (equal to the entry's).
    pub frontmatter: JsonObject,
}

fn unverified(e: mcp_skills::VerifyError) -> ClientError {
    ClientError::InvalidAnswer {
        method: "resources/read".into(),
        message: format!("skill content not used: {e}"),
    }
}

impl Client {
    /// True when the server declares the skills extension.
    pub fn serves_skills(&self) -> bool {
        self.server_capabilities()
            .extensions
            .as_ref()
            .is_some_and(|e| e.contains_key(mcp_types::extensions::skills::ID))
    }

    /// One page of `skills/list`.
    pub async fn list_skills(&self, cursor: Option<&str>) -> Result<ListSkillsResult, ClientError> {
        self.inner.call("skills/list", cursor_params(cursor), &RequestOptions::default()).await
    }

    /// Every skill the server lists, within the client's [`ListLimits`](crate::ListLimits)
    /// (a server may list only some, or none, of the skills it serves). Nothing of the skills'
    /// files is fetched.
    pub async fn list_all_skills(&self) -> Result<Vec<SkillEntry>, ClientError> {
        let (method, options) = ("skills/list", RequestOptions::default());
        all_pages(
            method,
            self.list_limits(&options),
            |cursor| self.page(method, cursor, &options),
            |raw| decode::<ListSkillsResult>(method, &raw).map(|page| (page.skills, page.next_cursor)),
        )
        .await
    }

    /// `skills/get`: the entry of the skill whose `SKILL.md` is at `uri`, listed or not.
    pub async fn get_skill(&self, uri: &str) -> Result<SkillEntry, ClientError> {
        let result = self.request::<GetSkill>(&GetSkillParams::new(uri), &RequestOptions::default()).await?;
        if result.skill.uri != uri {
            return Err(ClientError::InvalidAnswer {
                method: "skills/get".into(),
                message: format!("asked for {uri}, got the skill at {}", result.skill.uri),
            });
        }
        Ok(result.skill)
    }

    /// `resources/directory/read`, every page: the direct children of the directory at `uri`
    /// (a server that declares `directoryRead`).
    pub async fn read_directory(&self, uri: &str) -> Result<Vec<Resource>, ClientError> {
        let mut children = Vec::new();
        let mut params = ReadDirectoryParams::new(uri);
        let limits = self.list_limits(&RequestOptions::default());
        for _ in 0..limits.max_pages {
            let page: ReadDirectoryResult =
                self.request::<ReadDirectory>(&params, &RequestOptions::default()).await?;
            children.extend(page.resources);
            if children.len() > limits.max_items {
                return Err(ClientError::ListingTooLarge {
                    method: "resources/directory/read".into(),
                    bound: crate::error::ListingBound::Items(limits.max_items),
                });
            }
            match page.next_cursor {
                Some(next) if params.cursor.as_ref() != Some(&next) => params.cursor = Some(next),
                _ => return Ok(children),
            }
        }
        Err(ClientError::ListingTooLarge {
            method: "resources/directory/read".into(),
            bound: crate::error::ListingBound::Pages(limits.max_pages),
        })
    }

    /// Loads a skill: reads its `SKILL.md` and checks it against `entry` — its size and digest,
    /// then its frontmatter field by field. Content that does not match is never returned.
    pub async fn load_skill(&self, entry: &SkillEntry) -> Result<LoadedSkill, ClientError> {
        let bytes = self.read_bytes(&entry.uri).await?;
        let text = String::from_utf8(bytes).map_err(|_| ClientError::InvalidAnswer {
            method: "resources/read".into(),
            message: format!("{} is not UTF-8 text", entry.uri),
        })?;
        let frontmatter = mcp_skills::verify_manifest(entry, &text).map_err(unverified)?;
        Ok(LoadedSkill { entry: entry.clone(), text, frontmatter })
    }

    /// Reads a file of a skill (one its entry lists), checked against the entry.
    pub async fn read_skill_file(&self, entry: &SkillEntry, uri: &str) -> Result<Vec<u8>, ClientError> {
        if entry.file(uri).is_none()
            && matches!(entry.resources, mcp_types::extensions::skills::SkillResources::Files(_))
        {
            return Err(unverified(mcp_skills::VerifyError::Unlisted(uri.to_owned())));
        }
        let bytes = self.read_bytes(uri).await?;
        mcp_skills::verify_file(entry, uri, &bytes).map_err(unverified)?;
        Ok(bytes)
    }

    /// The raw bytes of the resource at `uri` (its text, or its blob decoded).
    async fn read_bytes(&self, uri: &str) -> Result<Vec<u8>, ClientError> {
        let result = self.read_resource(uri).await?;
        let contents = result.contents.into_iter().find(|c| match c {
            ResourceContents::Text(t) => t.uri == uri,
            ResourceContents::Blob(b) => b.uri == uri,
        });
        match contents {
            Some(ResourceContents::Text(t)) => Ok(t.text.into_bytes()),
            Some(ResourceContents::Blob(b)) => {
                base64::engine::general_purpose::STANDARD.decode(b.blob.as_bytes()).map_err(|e| {
                    ClientError::InvalidAnswer { method: "resources/read".into(), message: e.to_string() }
                })
            }
            None => Err(ClientError::InvalidAnswer {
                method: "resources/read".into(),
                message: format!("the answer holds no contents for {uri}"),
            }),
        }
    }
}
