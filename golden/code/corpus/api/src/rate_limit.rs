//! Token-bucket rate limiting in Redis: per user for signed-in requests, per IP for anonymous
//! shared-link traffic. The bucket update is one Lua script so concurrent requests cannot race.

use std::net::IpAddr;
use uuid::Uuid;

const TOKEN_BUCKET_LUA: &str = r#"
local tokens = tonumber(redis.call('HGET', KEYS[1], 'tokens') or ARGV[2])
local last = tonumber(redis.call('HGET', KEYS[1], 'ts') or ARGV[3])
local refill = (ARGV[3] - last) * ARGV[1]
tokens = math.min(ARGV[2], tokens + refill)
if tokens < 1 then return 0 end
redis.call('HSET', KEYS[1], 'tokens', tokens - 1, 'ts', ARGV[3])
redis.call('EXPIRE', KEYS[1], 120)
return 1
"#;

#[derive(Debug, Clone, Copy)]
pub struct Limit {
    pub per_second: f64,
    pub burst: u32,
}

pub const USER_LIMIT: Limit = Limit { per_second: 20.0, burst: 60 };
pub const SHARED_LINK_IP_LIMIT: Limit = Limit { per_second: 5.0, burst: 10 };

pub enum Subject {
    User(Uuid),
    AnonymousIp(IpAddr),
}

impl Subject {
    fn bucket_key(&self) -> String {
        match self {
            Subject::User(id) => format!("rl:user:{id}"),
            Subject::AnonymousIp(ip) => format!("rl:ip:{ip}"),
        }
    }
}

pub struct RateLimiter {
    pool: deadpool_redis::Pool,
    script: redis::Script,
}

impl RateLimiter {
    pub fn new(pool: deadpool_redis::Pool) -> Self {
        RateLimiter { pool, script: redis::Script::new(TOKEN_BUCKET_LUA) }
    }

    /// Takes one token; `false` means answer 429 with a Retry-After header.
    pub async fn check(&self, subject: &Subject, limit: Limit) -> Result<bool, redis::RedisError> {
        let mut conn = self.pool.get().await.map_err(|e| redis::RedisError::from((redis::ErrorKind::IoError, "pool", e.to_string())))?;
        let now = chrono::Utc::now().timestamp_millis() as f64 / 1000.0;
        let allowed: i32 = self
            .script
            .key(subject.bucket_key())
            .arg(limit.per_second)
            .arg(limit.burst)
            .arg(now)
            .invoke_async(&mut conn)
            .await?;
        Ok(allowed == 1)
    }
}

/// Seconds until one token is available again, for the Retry-After header.
pub fn retry_after_seconds(limit: Limit) -> u64 {
    (1.0 / limit.per_second).ceil() as u64
}
