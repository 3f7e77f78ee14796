//! Who is asking: cookie sessions (tower-sessions + axum-login) and bearer tokens.
//!
//! * Cookie sessions: tower-sessions' `SessionManagerLayer` over the store's database
//!   (tower-sessions-sqlx-store's `SqliteStore` or `PostgresStore` on the store's own
//!   pool, so every node of a cluster sees every session; tower-sessions' `MemoryStore`
//!   with the memory store), and axum-login's `AuthManagerLayer` on top, whose
//!   [`Backend`] reads the account on every request: a deleted or banned account is logged
//!   out at once. The session keeps axum-login's session auth hash, derived from the
//!   password hash: a password change logs out every other session. The cookie
//!   (`parchis_session`) is `HttpOnly`, `SameSite=Lax`, `Secure` when the public URL is
//!   https, and the session expires after [`IDLE`] without use (`touch` renews it at
//!   most once per [`TOUCH_EVERY_MS`]).
//! * Bearer tokens ([`BEARER_QUERY`] too, for WebSocket clients that cannot set headers):
//!   stored as their SHA-256, so any node can check them; [`IDLE`] without use ends them.

use std::sync::Arc;

use async_trait::async_trait;
use axum::http::{header, HeaderMap};
use axum_login::{AuthManagerLayer, AuthManagerLayerBuilder, AuthSession, AuthUser, AuthnBackend};
use parchis_store::{AccountRecord, SessionPool, Store, StoreError};
use tower_sessions::cookie::SameSite;
use tower_sessions::session::{Id, Record};
use tower_sessions::session_store::{self, ExpiredDeletion};
use tower_sessions::{Expiry, SessionManagerLayer, SessionStore};
use uuid::Uuid;

/// Sessions and tokens end after this long unused: 30 days.
pub const IDLE: std::time::Duration = std::time::Duration::from_secs(30 * 24 * 3600);
/// A session in use has its expiry pushed back at most this often (one write).
pub const TOUCH_EVERY_MS: i64 = 3_600_000;
/// The session cookie's name.
pub const COOKIE: &str = "parchis_session";
/// The query parameter that may carry a bearer token on `GET /ws`.
pub const BEARER_QUERY: &str = "access_token";
/// The session key of the last [`touch`] (unix ms).
const TOUCHED: &str = "touched_ms";

/// A logged-in player, as axum-login keeps them.
#[derive(Clone)]
pub struct User {
    /// The account id.
    pub id: Uuid,
    /// The username.
    pub username: String,
    /// The account's password hash's bytes: axum-login's session auth hash.
    auth_hash: Vec<u8>,
}

impl std::fmt::Debug for User {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("User")
            .field("id", &self.id)
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

impl From<AccountRecord> for User {
    fn from(a: AccountRecord) -> User {
        User {
            id: a.id,
            username: a.username,
            auth_hash: a.password_hash.into_bytes(),
        }
    }
}

impl AuthUser for User {
    type Id = Uuid;

    fn id(&self) -> Uuid {
        self.id
    }

    fn session_auth_hash(&self) -> &[u8] {
        &self.auth_hash
    }
}

/// axum-login's backend: reads accounts from the store.
#[derive(Clone)]
pub struct Backend {
    store: Arc<dyn Store>,
}

/// A store error, or a store without accounts.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The store keeps no accounts.
    #[error("this store keeps no accounts")]
    NoAccounts,
}

impl Backend {
    /// The active account `id` as a [`User`].
    ///
    /// # Errors
    /// The store's.
    pub async fn active(&self, id: Uuid) -> Result<Option<User>, BackendError> {
        let accounts = self.store.accounts().ok_or(BackendError::NoAccounts)?;
        Ok(accounts
            .account(id)
            .await?
            .filter(AccountRecord::is_active)
            .map(User::from))
    }
}

impl AuthnBackend for Backend {
    type User = User;
    /// The handlers check passwords themselves ([`super::password::Hasher`], bounded):
    /// what they hand axum-login is the account already verified.
    type Credentials = Uuid;
    type Error = BackendError;

    async fn authenticate(&self, id: Uuid) -> Result<Option<User>, BackendError> {
        self.active(id).await
    }

    async fn get_user(&self, id: &Uuid) -> Result<Option<User>, BackendError> {
        self.active(*id).await
    }
}

/// The session store matching the server's store.
#[derive(Debug, Clone)]
pub enum Sessions {
    /// In process (the memory store: tests).
    Memory(tower_sessions::MemoryStore),
    /// On the SQLite store's pool.
    Sqlite(tower_sessions_sqlx_store::SqliteStore),
    /// On the PostgreSQL store's pool.
    Postgres(tower_sessions_sqlx_store::PostgresStore),
}

macro_rules! each {
    ($self:ident, $s:ident => $e:expr) => {
        match $self {
            Sessions::Memory($s) => $e,
            Sessions::Sqlite($s) => $e,
            Sessions::Postgres($s) => $e,
        }
    };
}

#[async_trait]
impl SessionStore for Sessions {
    async fn create(&self, record: &mut Record) -> session_store::Result<()> {
        each!(self, s => s.create(record).await)
    }
    async fn save(&self, record: &Record) -> session_store::Result<()> {
        each!(self, s => s.save(record).await)
    }
    async fn load(&self, id: &Id) -> session_store::Result<Option<Record>> {
        each!(self, s => s.load(id).await)
    }
    async fn delete(&self, id: &Id) -> session_store::Result<()> {
        each!(self, s => s.delete(id).await)
    }
}

impl Sessions {
    /// The session store on `pool`; a SQL one also deletes expired sessions every hour
    /// (a task on the current runtime).
    pub fn on(pool: SessionPool) -> Sessions {
        let hourly = tokio::time::Duration::from_secs(3600);
        match pool {
            SessionPool::Memory => Sessions::Memory(tower_sessions::MemoryStore::default()),
            SessionPool::Sqlite(pool) => {
                let store = tower_sessions_sqlx_store::SqliteStore::new(pool);
                tokio::spawn(store.clone().continuously_delete_expired(hourly));
                Sessions::Sqlite(store)
            }
            SessionPool::Postgres { pool, schema } => {
                let store = tower_sessions_sqlx_store::PostgresStore::new(pool);
                // The migrations made `tower_sessions` in the store's schema; a name that
                // the crate refuses keeps its default schema (and fails loudly there).
                let store = match store.clone().with_schema_name(&schema) {
                    Ok(s) => s.with_table_name("tower_sessions").unwrap_or(store),
                    Err(e) => {
                        tracing::error!(error = %e, "session schema name refused");
                        store
                    }
                };
                tokio::spawn(store.clone().continuously_delete_expired(hourly));
                Sessions::Postgres(store)
            }
        }
    }
}

/// The authentication layer of the whole router: sessions over the store's database
/// (memory when the store keeps no accounts), cookies `Secure` when `secure`.
pub fn layer(store: Arc<dyn Store>, secure: bool) -> AuthManagerLayer<Backend, Sessions> {
    let pool = store
        .accounts()
        .map_or(SessionPool::Memory, |a| a.session_pool());
    let idle = tower_sessions::cookie::time::Duration::seconds(IDLE.as_secs() as i64);
    let sessions = SessionManagerLayer::new(Sessions::on(pool))
        .with_name(COOKIE)
        .with_http_only(true)
        .with_same_site(SameSite::Lax)
        .with_secure(secure)
        .with_path("/")
        .with_expiry(Expiry::OnInactivity(idle));
    AuthManagerLayerBuilder::new(Backend { store }, sessions).build()
}

/// The bearer token of a request: `Authorization: Bearer …`, else (with `query`) the
/// [`BEARER_QUERY`] parameter of the URI's query.
pub fn bearer(headers: &HeaderMap, query: Option<&str>) -> Option<String> {
    let header = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(|t| t.trim().to_owned());
    header.or_else(|| {
        query?.split('&').find_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            (k == BEARER_QUERY && !v.is_empty()).then(|| v.to_owned())
        })
    })
}

/// How the player was identified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// The session cookie.
    Cookie,
    /// A bearer token.
    Token,
}

/// The player asking: the bearer token's account when the request carries one (an
/// unknown or expired token is nobody, not the cookie's), else the session's.
///
/// # Errors
/// The store's.
pub async fn current(
    store: &Arc<dyn Store>,
    headers: &HeaderMap,
    query: Option<&str>,
    session: &AuthSession<Backend>,
) -> Result<Option<(User, Via)>, StoreError> {
    if let Some(token) = bearer(headers, query) {
        let Some(accounts) = store.accounts() else {
            return Ok(None);
        };
        let hash = parchis_store::hash_token(&token);
        let idle_ms = IDLE.as_millis() as i64;
        let found = accounts
            .token_account(&hash, parchis_room::now_ms(), idle_ms)
            .await?;
        return Ok(found.map(|a| (User::from(a), Via::Token)));
    }
    if let Some(user) = &session.user {
        touch(session).await;
        return Ok(Some((user.clone(), Via::Cookie)));
    }
    Ok(None)
}

/// Pushes a session's idle expiry back (by marking it changed: tower-sessions then
/// saves it with a new expiry), at most once per [`TOUCH_EVERY_MS`].
async fn touch(session: &AuthSession<Backend>) {
    let now = parchis_room::now_ms();
    let last: Option<i64> = session.session.get(TOUCHED).await.ok().flatten();
    if last.is_none_or(|t| now - t >= TOUCH_EVERY_MS) {
        if let Err(e) = session.session.insert(TOUCHED, now).await {
            tracing::warn!(error = %e, "session not touched");
        }
    }
}
