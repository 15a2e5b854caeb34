//! API errors as RFC 7807 problem+json bodies with a request id, so every error a client sees can
//! be found in the logs.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

#[derive(Debug, Serialize)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

#[derive(Debug, Serialize)]
pub struct Problem {
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    pub status: u16,
    pub detail: String,
    pub request_id: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<FieldError>,
}

impl Problem {
    pub fn not_found(what: &str, id: &str, request_id: &str) -> Problem {
        Problem {
            kind: "https://tidepool.app/problems/not-found".into(),
            title: "Not found".into(),
            status: 404,
            detail: format!("{what} {id} does not exist or you cannot see it"),
            request_id: request_id.into(),
            errors: vec![],
        }
    }

    /// A 422 listing each invalid field.
    pub fn validation(errors: Vec<FieldError>, request_id: &str) -> Problem {
        Problem {
            kind: "https://tidepool.app/problems/validation".into(),
            title: "Invalid request".into(),
            status: 422,
            detail: format!("{} invalid field(s)", errors.len()),
            request_id: request_id.into(),
            errors,
        }
    }

    pub fn rate_limited(retry_after: u64, request_id: &str) -> Problem {
        Problem {
            kind: "https://tidepool.app/problems/rate-limited".into(),
            title: "Too many requests".into(),
            status: 429,
            detail: format!("retry after {retry_after} s"),
            request_id: request_id.into(),
            errors: vec![],
        }
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut resp = (status, axum::Json(&self)).into_response();
        resp.headers_mut().insert("content-type", "application/problem+json".parse().expect("static header"));
        resp
    }
}
