//! The services a cluster test needs (PostgreSQL and NATS, from the environment) and
//! small helpers on their URLs.

use std::io::Write;
use std::time::Duration;

/// Creates a fresh database on the server of `url` (the `DATABASE_URL`), named after
/// `url`'s database and a random suffix. Returns the admin connection it used (for the
/// test to drop the database with), the new database's name and its URL.
pub async fn create_database(url: &str) -> (sqlx::PgConnection, String, String) {
    let db_name = format!("{}_{}", database_name(url), random_hex(10));
    let mut admin = <sqlx::PgConnection as sqlx::Connection>::connect(url)
        .await
        .expect("connect to DATABASE_URL");
    sqlx::query(&format!("CREATE DATABASE {db_name}"))
        .execute(&mut admin)
        .await
        .expect("create the test database");
    let db_url = with_database(url, &db_name);
    (admin, db_name, db_url)
}

/// `(DATABASE_URL, PARCHIS_NATS_URL)`, or `None` after printing why the test is skipped.
/// With `CI` set a missing or unreachable service fails the test instead.
pub async fn services(test: &str) -> Option<(String, String)> {
    let db = std::env::var("DATABASE_URL")
        .ok()
        .filter(|u| u.starts_with("postgres"));
    let nats = std::env::var("PARCHIS_NATS_URL")
        .ok()
        .filter(|u| !u.is_empty());
    let why = match (&db, &nats) {
        (None, _) => Some("DATABASE_URL (postgres://…) is not set".to_owned()),
        (_, None) => Some("PARCHIS_NATS_URL is not set".to_owned()),
        (_, Some(n)) if !nats_reachable(n).await => Some(format!("NATS at {n} does not answer")),
        _ => None,
    };
    match why {
        None => db.zip(nats),
        Some(why) if std::env::var_os("CI").is_some() => {
            panic!("{test}: CI is set but {why}: the cluster tests must run in CI")
        }
        Some(why) => {
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED {test}: NATS or DATABASE_URL absent ({why}; cluster test not run)"
            );
            None
        }
    }
}

/// Where Debian's libfaketime is (package `libfaketime`, pulled in by `faketime`, which
/// `.ci/run` installs when missing), or `None` after printing why the test is skipped.
/// With `CI` set its absence fails the test instead.
pub fn libfaketime(test: &str) -> Option<std::path::PathBuf> {
    let found = std::fs::read_dir("/usr/lib").ok().and_then(|dirs| {
        dirs.filter_map(Result::ok)
            .map(|d| d.path().join("faketime/libfaketime.so.1"))
            .find(|p| p.is_file())
    });
    match found {
        Some(lib) => Some(lib),
        None if std::env::var_os("CI").is_some() => {
            panic!(
                "{test}: CI is set but libfaketime is not installed (apt-get install -y faketime)"
            )
        }
        None => {
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED {test}: libfaketime absent (apt-get install -y faketime; clock test not run)"
            );
            None
        }
    }
}

/// Whether a TCP connection to the NATS URL's `host:port` opens within a second.
async fn nats_reachable(url: &str) -> bool {
    matches!(
        tokio::time::timeout(
            Duration::from_secs(1),
            tokio::net::TcpStream::connect(nats_hostport(url))
        )
        .await,
        Ok(Ok(_))
    )
}

/// `host:port` of a NATS URL (`nats://host:port`; 4222 when it names no port).
pub fn nats_hostport(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let hostport = rest.split(['/', ',']).next().unwrap_or(rest);
    let hostport = hostport.rsplit_once('@').map_or(hostport, |(_, h)| h);
    if hostport.contains(':') {
        hostport.to_owned()
    } else {
        format!("{hostport}:4222")
    }
}

/// The URL of database `name` on the server of `url` (its query string kept).
pub fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (url, String::new()),
    };
    let (server, _) = base.rsplit_once('/').expect("a database in DATABASE_URL");
    format!("{server}/{name}{query}")
}

/// The database name of a PostgreSQL URL, as a safe identifier prefix.
pub fn database_name(url: &str) -> String {
    let base = url.split('?').next().unwrap_or(url);
    let name = base.rsplit('/').next().unwrap_or("parchis");
    let clean: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    if clean.is_empty() {
        "parchis".into()
    } else {
        clean.to_ascii_lowercase()
    }
}

/// The port of a PostgreSQL URL (5432 when it names none).
pub fn url_port(url: &str) -> u16 {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let hostport = rest.split(['/', '?']).next().unwrap_or(rest);
    let hostport = hostport.rsplit_once('@').map_or(hostport, |(_, h)| h);
    hostport
        .rsplit_once(':')
        .and_then(|(_, p)| p.parse().ok())
        .unwrap_or(5432)
}

/// `host:port` of a PostgreSQL URL (`postgres://user@host:port/db?…`; 5432 when it names
/// no port).
pub fn pg_hostport(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let hostport = rest.split(['/', '?']).next().unwrap_or(rest);
    let hostport = hostport.rsplit_once('@').map_or(hostport, |(_, h)| h);
    if hostport.contains(':') {
        hostport.to_owned()
    } else {
        format!("{hostport}:5432")
    }
}

/// The PostgreSQL URL `url` with its `host:port` replaced by `addr` (user, database and
/// query kept).
pub fn with_hostport(url: &str, addr: std::net::SocketAddr) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("postgres", url));
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let user = authority.rsplit_once('@').map(|(u, _)| u);
    match user {
        Some(user) => format!("{scheme}://{user}@{addr}{tail}"),
        None => format!("{scheme}://{addr}{tail}"),
    }
}

pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

/// A random hex string of `n` digits.
pub fn random_hex(n: usize) -> String {
    use rand::Rng;
    let mut rng = rand::thread_rng();
    (0..n)
        .map(|_| char::from_digit(rng.gen_range(0..16), 16).unwrap_or('0'))
        .collect()
}
