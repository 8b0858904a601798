//! The skills extension in the router: `skills/list`, `skills/get` and
//! `resources/directory/read` over the skills the server was built with (their files are
//! ordinary resources, read with `resources/read`).

use std::sync::Arc;

use mcp_types::extensions::skills::{
    GetSkillParams, GetSkillResult, ListSkillsResult, ReadDirectoryParams, ReadDirectoryResult, SkillEntry,
};
use mcp_types::{ErrorObject, PaginatedRequestParams};

use super::{Ctx, Failure, Routed};
use crate::call::AskState;
use crate::policy::Item;
use crate::server::Server;

fn invalid(message: String) -> Failure {
    Failure::after_dispatch(ErrorObject::invalid_params(message))
}

impl Server {
    /// `skills/list`: the skills the caller may see, a page at a time (a skill is one entry,
    /// never split).
    pub(super) fn list_skills(&self, ctx: &Ctx<'_>, params: PaginatedRequestParams) -> Routed {
        let source = self.inner.skill_source.load_full();
        let own = self.inner.skills.as_ref().map(|s| &s.skills[..]).unwrap_or_default();
        let passed_on = source.as_ref().map(|s| s.entries());
        let all: Vec<&SkillEntry> =
            own.iter().map(|s| &s.entry).chain(passed_on.iter().flat_map(|e| e.iter())).collect();
        let (skills, next_cursor) = self.listed(
            ctx,
            "skills/list",
            &all,
            params.cursor.as_deref(),
            |s| Item::Resource { uri: &s.uri, def: None },
            |s| (*s).clone(),
        )?;
        let mut result = ListSkillsResult { skills, next_cursor, ..Default::default() };
        ctx.list_cache(&mut result);
        ctx.finish(result)
    }

    /// `skills/get`: the entry of the skill whose `SKILL.md` is at `params.uri`, listed or not;
    /// `-32602` for a URI that is no skill of this server's.
    pub(super) async fn get_skill(&self, ctx: &Ctx<'_>, params: GetSkillParams) -> Routed {
        let unknown = || invalid(format!("Unknown skill: {}", params.uri));
        self.permitted(ctx, Item::Resource { uri: &params.uri, def: None }, None, unknown)?;
        let own = self.inner.skills.as_ref().and_then(|s| s.get(&params.uri)).map(|s| s.entry.clone());
        let skill = match own {
            Some(entry) => entry,
            None => {
                let source = self.inner.skill_source.load_full().ok_or_else(unknown)?;
                let call = ctx.call(
                    Arc::new(AskState::new("skills/get", params.uri.clone(), Default::default(), None)),
                    None,
                    Some(params.uri.clone()),
                );
                match source.get(call, params.uri.clone()).await {
                    None => return Err(unknown()),
                    Some(Ok(entry)) => entry,
                    Some(Err(rejection)) => return Err(rejected(rejection)),
                }
            }
        };
        let mut result = GetSkillResult {
            skill,
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
    pub(super) async fn read_directory(&self, ctx: &Ctx<'_>, params: ReadDirectoryParams) -> Routed {
        let not_a_directory = || invalid(format!("Not a directory resource: {}", params.uri));
        let own = self.inner.skills.as_ref().and_then(|s| s.directories.get(&params.uri)).cloned();
        let children = match own {
            Some(children) => children,
            None => {
                let source = self.inner.skill_source.load_full().ok_or_else(not_a_directory)?;
                let call = ctx.call(
                    Arc::new(AskState::new(
                        "resources/directory/read",
                        params.uri.clone(),
                        Default::default(),
                        None,
                    )),
                    None,
                    Some(params.uri.clone()),
                );
                match source.read_directory(call, params.uri.clone()).await {
                    None => return Err(not_a_directory()),
                    Some(Ok(children)) => children,
                    Some(Err(rejection)) => return Err(rejected(rejection)),
                }
            }
        };
        let (resources, next_cursor) = self.listed(
            ctx,
            "resources/directory/read",
            &children,
            params.cursor.as_deref(),
            |r| Item::Resource { uri: &r.uri, def: Some(r) },
            Clone::clone,
        )?;
        ctx.finish(ReadDirectoryResult { resources, next_cursor, ..Default::default() })
    }
}

/// A passed-on request's failure: the other server's own error, or an internal one.
fn rejected(rejection: crate::extract::Rejection) -> Failure {
    match rejection {
        crate::extract::Rejection::Protocol(e) => Failure::after_dispatch(e),
        other => Failure::after_dispatch(ErrorObject::internal(other.to_string())),
    }
}
