//! Card charges through the PayGate gateway. Every attempt for an invoice carries the same
//! idempotency key, so a retry after a timeout can never charge twice.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::time::Duration;

pub struct PayGateClient {
    http: reqwest::Client,
    base_url: String,
    api_key: String,
}

#[derive(Debug, serde::Serialize)]
struct ChargeRequest<'a> {
    amount_cents: i64,
    currency: &'a str,
    customer: &'a str,
    description: String,
}

/// The idempotency key of an invoice: stable across retries and processes.
pub fn idempotency_key(invoice_id: &str) -> String {
    format!("inv-{invoice_id}-charge")
}

impl PayGateClient {
    pub fn new(base_url: String, api_key: String) -> Self {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(2))
            .timeout(Duration::from_secs(30))
            .build()
            .expect("static client config");
        PayGateClient { http, base_url, api_key }
    }

    /// Charges an invoice, retrying timeouts with jittered backoff (at most 3 attempts).
    pub async fn charge_invoice(&self, invoice_id: &str, customer: &str, amount_cents: i64) -> Result<String, ChargeError> {
        let body = ChargeRequest { amount_cents, currency: "EUR", customer, description: format!("Tidepool invoice {invoice_id}") };
        let mut delay = Duration::from_millis(500);
        for attempt in 1..=3 {
            let resp = self
                .http
                .post(format!("{}/v2/charges", self.base_url))
                .bearer_auth(&self.api_key)
                .header("Idempotency-Key", idempotency_key(invoice_id))
                .json(&body)
                .send()
                .await;
            match resp {
                Ok(r) if r.status().is_success() => return Ok(r.json::<serde_json::Value>().await?["id"].to_string()),
                Ok(r) if r.status().is_client_error() => return Err(ChargeError::Declined(r.status().as_u16())),
                _ if attempt < 3 => {
                    tokio::time::sleep(delay + jitter()).await;
                    delay *= 2;
                }
                Ok(r) => return Err(ChargeError::Gateway(r.status().as_u16())),
                Err(e) => return Err(ChargeError::Http(e)),
            }
        }
        unreachable!("the loop returns on the last attempt")
    }
}

fn jitter() -> Duration {
    Duration::from_millis(rand::random::<u64>() % 250)
}

/// Verifies a webhook signature against the current secret and, during a rotation window, the
/// previous one.
pub fn verify_webhook_signature(payload: &[u8], signature_hex: &str, current: &str, previous: Option<&str>) -> bool {
    let check = |secret: &str| {
        let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key length");
        mac.update(payload);
        hex::decode(signature_hex).map(|sig| mac.verify_slice(&sig).is_ok()).unwrap_or(false)
    };
    check(current) || previous.is_some_and(check)
}

#[derive(Debug, thiserror::Error)]
pub enum ChargeError {
    #[error("card declined (HTTP {0})")]
    Declined(u16),
    #[error("gateway error (HTTP {0})")]
    Gateway(u16),
    #[error("http: {0}")]
    Http(#[from] reqwest::Error),
}
