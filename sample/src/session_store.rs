//! Session storage backed by Redis (moved from Memcached, which lost sessions on restart).

use std::time::Duration;

/// How long a session lives without activity.
pub const SESSION_TTL: Duration = Duration::from_secs(30 * 60);

/// A session store over a Redis connection.
pub struct SessionStore {
    client: redis::Client,
    prefix: String,
}

impl SessionStore {
    /// Connects to Redis at `url`; sessions are keyed under `prefix`.
    pub fn connect(url: &str, prefix: &str) -> Result<SessionStore, StoreError> {
        let client = redis::Client::open(url).map_err(StoreError::Connect)?;
        Ok(SessionStore { client, prefix: prefix.to_string() })
    }

    /// Loads a session, refreshing its expiry.
    pub fn load(&self, session_id: &str) -> Result<Option<Session>, StoreError> {
        let key = format!("{}:{}", self.prefix, session_id);
        let mut conn = self.client.get_connection().map_err(StoreError::Connect)?;
        let raw: Option<String> = conn.get_ex(&key, SESSION_TTL).map_err(StoreError::Command)?;
        raw.map(|r| serde_json::from_str(&r).map_err(StoreError::Decode)).transpose()
    }

    /// Deletes every session of a user (used on password change).
    pub fn invalidate_user(&self, user_id: u64) -> Result<usize, StoreError> {
        let pattern = format!("{}:user:{}:*", self.prefix, user_id);
        let mut conn = self.client.get_connection().map_err(StoreError::Connect)?;
        let keys: Vec<String> = conn.keys(&pattern).map_err(StoreError::Command)?;
        conn.del(&keys).map_err(StoreError::Command)
    }
}
