#![doc = include_str!("../README.md")]

pub mod address;
pub mod autostart;
pub mod client;
pub mod error;
mod print;
pub mod profile;
pub mod retry;
pub mod session;
pub mod transcript;

/// The generated `postcompact.v1` messages, enums and tonic client.
///
/// The crate adds [`pb::Attachment::rendered_text`] (an attachment's blocks joined by `"\n"`)
/// and [`pb::Attachment::is_system`] (its placement is `PLACEMENT_SYSTEM`).
#[allow(clippy::all, clippy::pedantic, missing_docs, rustdoc::all)]
pub mod pb {
    tonic::include_proto!("postcompact.v1");
}

/// The generated `grpc.health.v1` client (used for the auto-start health wait).
#[allow(clippy::all, clippy::pedantic, missing_docs, rustdoc::all)]
pub mod health_pb {
    tonic::include_proto!("grpc.health.v1");
}

pub use address::{Address, AddressSource};
pub use autostart::{AutoStartPolicy, REASON_DAEMON_START_FAILED};
pub use client::{Client, Options};
pub use error::{
    code_name, Error, RpcError, REASON_CONNECTION_LOST, REASON_DEADLINE_EXCEEDED,
    REASON_TRANSPORT_ERROR,
};
pub use profile::{parse_profile, profile_name};
pub use retry::{RetryPolicy, REASON_DAEMON_UNAVAILABLE};
pub use session::{join, join_rendered_text, Compaction, Injection, Session};
pub use tonic::Code;
pub use transcript::ImportOptions;
