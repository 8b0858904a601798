//! Which resource URIs clients want updates for — legacy `resources/subscribe` and modern
//! `subscriptions/listen` `resourceSubscriptions` counted together — for a server whose
//! resources live elsewhere (a gateway subscribes upstream only to what its clients follow).
//! Without a hook ([`ServerBuilder::on_resource_interest`](crate::ServerBuilder)) nothing is
//! counted.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Told `(uri, true)` when the first client starts following `uri`, `(uri, false)` when the
/// last one stops (unsubscribes, its listen stream ends, its session ends). Called with the
/// count's lock held, so the calls for one URI come in order: keep it short (record, notify).
pub type InterestHook = Arc<dyn Fn(&str, bool) + Send + Sync>;

/// The count of followers of each URI.
#[derive(Default)]
pub(crate) struct Interest {
    counts: Mutex<HashMap<String, usize>>,
    hook: Option<InterestHook>,
}

impl Interest {
    pub(crate) fn new(hook: Option<InterestHook>) -> Self {
        Interest { counts: Mutex::default(), hook }
    }

    fn is_watched(&self) -> bool {
        self.hook.is_some()
    }

    /// One more follower of `uri`.
    pub(crate) fn add(&self, uri: &str) {
        let Some(hook) = &self.hook else { return };
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let count = counts.entry(uri.to_owned()).or_insert(0);
        *count += 1;
        if *count == 1 {
            hook(uri, true);
        }
    }

    /// One follower of `uri` fewer.
    pub(crate) fn remove(&self, uri: &str) {
        let Some(hook) = &self.hook else { return };
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let Some(count) = counts.get_mut(uri) else { return };
        *count -= 1;
        if *count == 0 {
            counts.remove(uri);
            hook(uri, false);
        }
    }
}

/// The URIs one `subscriptions/listen` stream follows, given back when it ends.
pub(crate) struct Following {
    interest: Arc<Interest>,
    uris: Vec<String>,
}

impl Following {
    pub(crate) fn new(interest: &Arc<Interest>, uris: Option<&Vec<String>>) -> Following {
        let mut uris: Vec<String> = match uris {
            Some(uris) if interest.is_watched() => uris.clone(),
            _ => Vec::new(),
        };
        uris.sort_unstable();
        uris.dedup();
        for uri in &uris {
            interest.add(uri);
        }
        Following { interest: interest.clone(), uris }
    }
}

impl Drop for Following {
    fn drop(&mut self) {
        for uri in &self.uris {
            self.interest.remove(uri);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_only_at_the_first_and_the_last_follower() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let hook: InterestHook = Arc::new(move |uri, on| log.lock().unwrap().push((uri.to_owned(), on)));
        let interest = Arc::new(Interest::new(Some(hook)));
        interest.add("a://1");
        let stream = Following::new(&interest, Some(&vec!["a://1".into(), "a://2".into(), "a://2".into()]));
        interest.remove("a://1");
        interest.remove("never://added");
        drop(stream);
        let seen = seen.lock().unwrap().clone();
        let expected = [("a://1", true), ("a://2", true), ("a://1", false), ("a://2", false)];
        assert_eq!(seen, expected.map(|(u, on)| (u.to_owned(), on)));
    }
}
