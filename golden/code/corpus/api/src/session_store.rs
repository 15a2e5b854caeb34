//! Server-side sessions in Redis: opaque ids in an HttpOnly cookie, a sliding 30-minute TTL.

use redis::AsyncCommands;
use std::time::Duration;
use uuid::Uuid;

/// Sessions expire after this long without a request.
pub const SESSION_TTL: Duration = Duration::from_secs(30 * 60);

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Session {
    pub id: Uuid,
    pub user_id: Uuid,
    pub csrf_token: String,
    pub created_unix: i64,
}

pub struct SessionStore {
    pool: deadpool_redis::Pool,
}

fn key(id: &Uuid) -> String {
    format!("sess:{id}")
}

impl SessionStore {
    pub fn new(pool: deadpool_redis::Pool) -> Self {
        SessionStore { pool }
    }

    /// Creates a session for a user who just logged in and returns it.
    pub async fn create(&self, user_id: Uuid) -> Result<Session, StoreError> {
        let session = Session {
            id: Uuid::now_v7(),
            user_id,
            csrf_token: crate::crypto::random_token(32),
            created_unix: chrono::Utc::now().timestamp(),
        };
        let mut conn = self.pool.get().await?;
        let body = serde_json::to_string(&session)?;
        conn.set_ex::<_, _, ()>(key(&session.id), body, SESSION_TTL.as_secs()).await?;
        Ok(session)
    }

    /// Loads a session and slides its expiry; `None` when it expired or never existed.
    pub async fn load(&self, id: &Uuid) -> Result<Option<Session>, StoreError> {
        let mut conn = self.pool.get().await?;
        let body: Option<String> = conn.get_ex(key(id), redis::Expiry::EX(SESSION_TTL.as_secs())).await?;
        // Drop the pooled connection before any other await (see the Redis pool gotcha).
        drop(conn);
        match body {
            Some(b) => Ok(Some(serde_json::from_str(&b)?)),
            None => Ok(None),
        }
    }

    /// Logs a session out everywhere it is used.
    pub async fn revoke(&self, id: &Uuid) -> Result<(), StoreError> {
        let mut conn = self.pool.get().await?;
        conn.del::<_, ()>(key(id)).await?;
        Ok(())
    }

    /// Revokes every session of a user, e.g. when they are removed from a team.
    pub async fn revoke_all_for_user(&self, user_id: &Uuid) -> Result<usize, StoreError> {
        let mut conn = self.pool.get().await?;
        let ids: Vec<String> = conn.smembers(format!("user_sessions:{user_id}")).await?;
        for id in &ids {
            conn.del::<_, ()>(format!("sess:{id}")).await?;
        }
        conn.del::<_, ()>(format!("user_sessions:{user_id}")).await?;
        Ok(ids.len())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("redis pool: {0}")]
    Pool(#[from] deadpool_redis::PoolError),
    #[error("session record: {0}")]
    Decode(#[from] serde_json::Error),
}
