//! The WebSocket `Origin` allow-list: which web pages may open a connection.
//!
//! A browser sends the page's origin (`scheme://host[:port]`) with every WebSocket
//! upgrade; a page on another site must not be able to play with a visitor's browser.
//! Allowed: no `Origin` header (apps and command-line clients send none), an origin whose
//! `host[:port]` is the request's own `Host` (the server's own pages, whatever name it is
//! reached by), and every origin on the list (compared without case and trailing `/`;
//! `*` allows all).

/// `scheme://host[:port]` of a URL such as `https://parchis.example/play` (lower-case,
/// no path); `None` when it has no `scheme://`.
pub fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    (!scheme.is_empty() && !authority.is_empty())
        .then(|| format!("{}://{}", scheme, authority).to_ascii_lowercase())
}

/// Whether a WebSocket upgrade with `origin` (the header, if any) and `host` (the `Host`
/// header, if any) may proceed under `allowed`.
pub fn allowed(origin: Option<&str>, host: Option<&str>, allowed: &[String]) -> bool {
    let Some(origin) = origin else {
        return true;
    };
    let origin = origin.trim().trim_end_matches('/').to_ascii_lowercase();
    let authority = origin.split_once("://").map(|(_, a)| a);
    if let (Some(a), Some(h)) = (authority, host) {
        if a == h.trim().to_ascii_lowercase() {
            return true;
        }
    }
    allowed.iter().any(|a| {
        let a = a.trim().trim_end_matches('/');
        a == "*" || a.eq_ignore_ascii_case(&origin)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_of_urls() {
        assert_eq!(
            origin_of("https://Parchis.example/play?x=1").as_deref(),
            Some("https://parchis.example")
        );
        assert_eq!(
            origin_of("http://127.0.0.1:8080").as_deref(),
            Some("http://127.0.0.1:8080")
        );
        assert_eq!(origin_of("parchis.example"), None);
    }

    #[test]
    fn the_allow_list() {
        let list = vec!["https://parchis.example".to_owned()];
        assert!(allowed(None, Some("x"), &list), "apps send no Origin");
        assert!(allowed(Some("https://parchis.example"), None, &list));
        assert!(allowed(Some("HTTPS://PARCHIS.EXAMPLE/"), None, &list));
        assert!(!allowed(
            Some("https://evil.example"),
            Some("parchis.example"),
            &list
        ));
        assert!(
            !allowed(Some("http://parchis.example"), None, &list),
            "scheme counts"
        );
        assert!(
            allowed(Some("http://10.0.0.5:8080"), Some("10.0.0.5:8080"), &list),
            "same host"
        );
        assert!(!allowed(Some("null"), Some("parchis.example"), &list));
        assert!(allowed(
            Some("https://evil.example"),
            None,
            &["*".to_owned()]
        ));
    }
}
