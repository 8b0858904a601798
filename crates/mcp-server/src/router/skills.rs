//! The skills extension in the router: `skills/list`, `skills/get` and
//! `resources/directory/read` over the skills the server was built with (their files are
//! ordinary resources, read with `resources/read`).

use mcp_types::extensions::skills::{
    GetSkillParams, GetSkillResult, ListSkillsResult, ReadDirectoryParams, ReadDirectoryResult,
};
use mcp_types::{ErrorObject, PaginatedRequestParams};

use super::{Ctx, Failure, Routed};
use crate::policy::Item;
use crate::server::Server;

fn invalid(message: String) -> Failure {
    Failure::after_dispatch(ErrorObject::invalid_params(message))
}

impl Server {
    /// `skills/list`: the skills the caller may see, a page at a time (a skill is one entry,
    /// never split).
    pub(super) fn list_skills(&self, ctx: &Ctx<'_>, params: PaginatedRequestParams) -> Routed {
        let Some(skills) = self.inner.skills.as_ref() else {
            return Err(Failure::after_dispatch(ErrorObject::method_not_found("skills/list")));
        };
        let (skills, next_cursor) = self.listed(
            ctx,
            "skills/list",
            &skills.skills,
            params.cursor.as_deref(),
            |s| Item::Resource { uri: &s.entry.uri, def: None },
            |s| s.entry.clone(),
        )?;
        let mut result = ListSkillsResult { skills, next_cursor, ..Default::default() };
        ctx.list_cache(&mut result);
        ctx.finish(result)
    }

    /// `skills/get`: the entry of the skill whose `SKILL.md` is at `params.uri`, listed or not;
    /// `-32602` for a URI that is no skill of this server's.
    pub(super) fn get_skill(&self, ctx: &Ctx<'_>, params: GetSkillParams) -> Routed {
        let unknown = || invalid(format!("Unknown skill: {}", params.uri));
        let skill = self.inner.skills.as_ref().and_then(|s| s.get(&params.uri)).ok_or_else(unknown)?;
        self.permitted(ctx, Item::Resource { uri: &params.uri, def: None }, None, unknown)?;
        let mut result = GetSkillResult {
            skill: skill.entry.clone(),
            result_type: None,
            ttl_ms: None,
            cache_scope: None,
            meta: None,
            extra: Default::default(),
        };
        ctx.list_cache(&mut result);
        ctx.finish(result)
    }

    /// `resources/directory/read`: the direct children of a directory of the skills'
    /// namespace (files, and subdirectories as `inode/directory`); `-32602` for anything else.
    pub(super) fn read_directory(&self, ctx: &Ctx<'_>, params: ReadDirectoryParams) -> Routed {
        let children = self.inner.skills.as_ref().and_then(|s| s.directories.get(&params.uri));
        let children =
            children.ok_or_else(|| invalid(format!("Not a directory resource: {}", params.uri)))?;
        let (resources, next_cursor) = self.listed(
            ctx,
            "resources/directory/read",
            children,
            params.cursor.as_deref(),
            |r| Item::Resource { uri: &r.uri, def: Some(r) },
            Clone::clone,
        )?;
        ctx.finish(ReadDirectoryResult { resources, next_cursor, ..Default::default() })
    }
}
