//! The connection: Unix socket or TCP channel, bearer token on TCP, auto-start with a health
//! wait, and one method per RPC.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use hyper_util::rt::TokioIo;
use tokio::net::UnixStream;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::interceptor::InterceptedService;
use tonic::service::Interceptor;
use tonic::transport::{Channel, Endpoint, Uri};
use tonic::Code;

use crate::address::{self, Address, AddressSource, Env, ProcessEnv, Resolved};
use crate::autostart::{first_error_line, AutoStartPolicy, Starter, EXIT_ALREADY_RUNNING};
use crate::error::{Error, RpcError, ERROR_DOMAIN, REASON_CONNECTION_LOST};
use crate::health_pb::health_check_response::ServingStatus;
use crate::health_pb::health_client::HealthClient;
use crate::health_pb::HealthCheckRequest;
use crate::pb;
use crate::pb::postcompact_service_client::PostcompactServiceClient;
use crate::retry::{self, RetryPolicy, Rpc, REASON_DAEMON_UNAVAILABLE};

/// How long auto-start waits for the daemon to report SERVING.
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one connection attempt may take.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The default deadline of a call (like the Python client's `timeout=30.0`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// The largest message sent or received, as in the Go and Node clients (the daemon allows 32 MiB;
/// tonic's default of 4 MiB would refuse large answers with OUT_OF_RANGE).
pub const MAX_MESSAGE_SIZE: usize = 64 << 20;

type Transport = InterceptedService<Channel, BearerToken>;
/// The generated tonic client, with the bearer-token interceptor.
pub type RawClient = PostcompactServiceClient<Transport>;

/// Adds `authorization: Bearer <token>` to every call (TCP only; `None` on a Unix socket).
/// Printed (`Debug`), it shows whether a token is set, never the token (print.rs).
#[derive(Clone, Default)]
pub struct BearerToken(Option<MetadataValue<Ascii>>);

impl BearerToken {
    pub fn new(token: Option<&str>) -> Result<Self, Error> {
        token
            .map(|t| {
                format!("Bearer {t}")
                    .parse::<MetadataValue<Ascii>>()
                    .map_err(|_| Error::Config("the TCP token is not valid ASCII metadata".into()))
            })
            .transpose()
            .map(BearerToken)
    }

    pub fn is_set(&self) -> bool {
        self.0.is_some()
    }
}

impl Interceptor for BearerToken {
    fn call(&mut self, mut req: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(v) = &self.0 {
            req.metadata_mut().insert("authorization", v.clone());
        }
        Ok(req)
    }
}

/// Options for [`Client::connect_with`]. `Options::default()` is what [`Client::connect`] uses.
/// Printed (`Debug`), the token shows as `<hidden>` (print.rs).
#[derive(Clone)]
pub struct Options {
    /// An explicit address (`unix:///path` or `host:port`); `None` resolves it
    /// (`POSTCOMPACT_ADDRESS`, then server.json, then the default socket).
    pub address: Option<String>,
    /// Start the daemon when it is not running. `None` = on, unless `address` is explicit.
    pub auto_start: Option<bool>,
    /// The daemon executable; `None` = `POSTCOMPACT_BIN`, else `postcompact` on PATH.
    pub daemon_bin: Option<PathBuf>,
    /// The TCP token; `None` = `POSTCOMPACT_TOKEN`, else server.json's `token_file`, else `D/token`.
    pub token: Option<String>,
    /// How long auto-start waits for health.
    pub start_timeout: Duration,
    /// How long a connection attempt may take.
    pub connect_timeout: Duration,
    /// The deadline of each call, sent to the daemon (`grpc-timeout`); `None` = none. A call
    /// that runs out of it fails with `DEADLINE_EXCEEDED` and is not retried: without one, a
    /// hung daemon would block the caller forever.
    pub timeout: Option<Duration>,
    /// Retries of idempotent calls while the daemon restarts, and of any call it refused with a
    /// RetryInfo (`OVERLOADED`) (default: about 10 s, then `DAEMON_UNAVAILABLE`, or the daemon's
    /// `OVERLOADED`; [`RetryPolicy::none`] turns it off). See docs/clients.md.
    pub retry: RetryPolicy,
    /// How often auto-start may start the daemon over the client's life (default: at most 3
    /// starts a minute, 1 s after each, doubling after each failed one up to 30 s).
    pub auto_start_policy: AutoStartPolicy,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            address: None,
            auto_start: None,
            daemon_bin: None,
            token: None,
            start_timeout: DEFAULT_START_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            timeout: Some(DEFAULT_TIMEOUT),
            retry: RetryPolicy::default(),
            auto_start_policy: AutoStartPolicy::default(),
        }
    }
}

impl Options {
    /// Connects to this explicit address (auto-start off unless [`Options::auto_start`] says so).
    pub fn address(mut self, address: impl Into<String>) -> Self {
        self.address = Some(address.into());
        self
    }

    pub fn auto_start(mut self, on: bool) -> Self {
        self.auto_start = Some(on);
        self
    }

    pub fn daemon_bin(mut self, bin: impl Into<PathBuf>) -> Self {
        self.daemon_bin = Some(bin.into());
        self
    }

    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    pub fn start_timeout(mut self, t: Duration) -> Self {
        self.start_timeout = t;
        self
    }

    pub fn connect_timeout(mut self, t: Duration) -> Self {
        self.connect_timeout = t;
        self
    }

    /// The deadline of each call (default 30 s); `None` for none.
    pub fn timeout(mut self, t: impl Into<Option<Duration>>) -> Self {
        self.timeout = t.into();
        self
    }

    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    pub fn auto_start_policy(mut self, policy: AutoStartPolicy) -> Self {
        self.auto_start_policy = policy;
        self
    }

    /// Whether auto-start applies: explicitly set, else on unless the address is explicit.
    pub fn auto_start_enabled(&self) -> bool {
        self.auto_start.unwrap_or(self.address.is_none())
    }
}

#[derive(Clone)]
struct Conn {
    rpc: RawClient,
    health: HealthClient<Transport>,
    resolved: Resolved,
}

/// A connection to the daemon. Cheap to clone; clones share the connection.
///
/// Every RPC of `postcompact.v1.PostcompactService` has a method here taking the request
/// message and returning the response message (OpenSession is [`Client::open_session_with`],
/// which returns a [`crate::Session`]; ImportTranscript is [`Client::import_transcript`] with
/// [`crate::ImportOptions`], or [`Client::import_transcript_with`] with the request; ListSessions
/// is paged: [`Client::list_sessions`] walks every page, [`Client::list_sessions_page`] gets
/// one). When auto-start is on and a call finds the daemon gone (a transport-level
/// UNAVAILABLE), the client starts it again, within [`Options::auto_start_policy`] (shared by
/// its clones), and retries the call at once when that is safe (an idempotent call, or one
/// never sent). Each call has a deadline, [`Options::timeout`].
/// [`Client::open_session`] gives the higher-level [`crate::Session`] flow.
#[derive(Clone)]
pub struct Client {
    conn: Arc<RwLock<Conn>>,
    opts: Arc<Options>,
    starter: Arc<Starter>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("address", &self.address().to_string())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Finds the daemon (starting it when needed) with the default options.
    pub async fn connect() -> Result<Client, Error> {
        Client::connect_with(Options::default()).await
    }

    /// Connects to an explicit address, without auto-start.
    pub async fn connect_to(address: impl Into<String>) -> Result<Client, Error> {
        Client::connect_with(Options::default().address(address)).await
    }

    /// Connects with the given options.
    pub async fn connect_with(opts: Options) -> Result<Client, Error> {
        let starter = Arc::new(Starter::new(opts.auto_start_policy.clone()));
        let conn = match establish_or_start(&opts, &starter).await? {
            Started::Serving(conn) => *conn,
            Started::Deferred(why) => {
                return Err(Error::Connect {
                    address: address::resolve(opts.address.as_deref(), &ProcessEnv)?
                        .address
                        .to_string(),
                    message: format!("no daemon answered; auto-start: {why}"),
                })
            }
        };
        Ok(Client {
            conn: Arc::new(RwLock::new(conn)),
            opts: Arc::new(opts),
            starter,
        })
    }

    /// The same connection with another retry policy.
    pub fn with_retry(&self, policy: RetryPolicy) -> Client {
        let mut opts = (*self.opts).clone();
        opts.retry = policy;
        Client {
            conn: Arc::clone(&self.conn),
            opts: Arc::new(opts),
            starter: Arc::clone(&self.starter),
        }
    }

    /// The address in use.
    pub fn address(&self) -> Address {
        self.conn.read().expect("lock").resolved.address.clone()
    }

    /// How the address was found.
    pub fn address_source(&self) -> AddressSource {
        self.conn.read().expect("lock").resolved.source
    }

    /// The generated tonic client, for anything the wrapper does not cover.
    pub fn raw(&self) -> RawClient {
        self.conn.read().expect("lock").rpc.clone()
    }

    /// `grpc.health.v1.Health/Check` for the whole server: true when SERVING.
    pub async fn health(&self) -> Result<bool, Error> {
        let mut h = self.conn.read().expect("lock").health.clone();
        let req = with_deadline(
            HealthCheckRequest {
                service: String::new(),
            },
            self.opts.timeout,
        );
        let r = h.check(req).await.map_err(deadline_exceeded)?;
        Ok(r.into_inner().status() == ServingStatus::Serving)
    }

    /// Runs a call with the deadline [`Options::timeout`]; on a transport UNAVAILABLE with
    /// auto-start on, makes sure the daemon runs (starting it, within
    /// [`Options::auto_start_policy`]), reconnects and re-sends at once if the call is
    /// idempotent or was never sent. Within [`Options::retry`], an answer with a RetryInfo
    /// (OVERLOADED) is retried for any call, after at least its delay, and a transport failure
    /// when that is safe (`retry.rs`). A failure no daemon answered gets the client's reason
    /// ([`Error::reason`]).
    pub(crate) async fn call<Req, Resp, F, Fut>(&self, req: Req, f: F) -> Result<Resp, Error>
    where
        Req: Clone + Rpc,
        F: Fn(RawClient, tonic::Request<Req>) -> Fut,
        Fut: Future<Output = Result<tonic::Response<Resp>, tonic::Status>>,
    {
        let policy = &self.opts.retry;
        let begin = Instant::now();
        let mut attempts = 0u32;
        loop {
            let status = match f(self.raw(), with_deadline(req.clone(), self.opts.timeout)).await {
                Ok(r) => return Ok(r.into_inner()),
                Err(s) => deadline_exceeded(s),
            };
            if self.opts.auto_start_enabled() && is_transport_unavailable(&status) {
                if let Started::Serving(conn) =
                    establish_or_start(&self.opts, &self.starter).await?
                {
                    *self.conn.write().expect("lock") = *conn;
                    // Re-send at once only what cannot be applied twice: an idempotent call, or
                    // one that never reached a daemon. Any other may have been applied before the
                    // connection broke: reported below as not retried, as without auto-start.
                    if req.is_idempotent() || retry::not_sent(&status) {
                        continue;
                    }
                }
            }
            attempts += 1;
            let err = RpcError::from_status(status);
            if let Some(delay) = err.retry_after() {
                // Refused before anything was applied (OVERLOADED): safe for any call, after the
                // daemon's delay. Once the policy is spent the daemon's own error is the answer.
                let remaining = policy.max_elapsed.saturating_sub(begin.elapsed());
                if attempts >= policy.max_attempts || remaining.is_zero() {
                    return Err(Error::Rpc(err));
                }
                tokio::time::sleep(delay.max(policy.backoff(attempts)).min(remaining)).await;
                continue;
            }
            if !retry::is_transport_failure(&err.status) {
                return Err(Error::Rpc(err.named()));
            }
            let status = err.status;
            let address = self.address().to_string();
            if !req.is_idempotent() && !retry::not_sent(&status) {
                let message = format!(
                    "the connection to the postcompact daemon at {address} failed during {}, \
                     which is not retried: the daemon may have applied it (error: {})",
                    Req::METHOD,
                    status.message()
                );
                return Err(Error::Rpc(RpcError {
                    code: status.code(),
                    message,
                    reason: Some(REASON_CONNECTION_LOST.to_owned()),
                    domain: Some(ERROR_DOMAIN.to_owned()),
                    metadata: BTreeMap::from([("address".to_owned(), address)]),
                    status,
                }));
            }
            let elapsed = begin.elapsed();
            let remaining = policy.max_elapsed.saturating_sub(elapsed);
            if attempts >= policy.max_attempts || remaining.is_zero() {
                let why = if self.opts.auto_start_enabled() {
                    self.starter.why_not()
                } else {
                    String::new()
                };
                let note = if why.is_empty() {
                    why
                } else {
                    format!("; auto-start: {why}")
                };
                let message = format!(
                    "no postcompact daemon answered at {address}: {} failed {attempts} time(s) \
                     over {:.1}s (last error: {}){note}",
                    Req::METHOD,
                    elapsed.as_secs_f64(),
                    status.message()
                );
                let metadata = BTreeMap::from([
                    ("address".to_owned(), address),
                    ("attempts".to_owned(), attempts.to_string()),
                    ("elapsed_ms".to_owned(), elapsed.as_millis().to_string()),
                ]);
                return Err(Error::Rpc(RpcError {
                    code: Code::Unavailable,
                    status: tonic::Status::unavailable(message.clone()),
                    message,
                    reason: Some(REASON_DAEMON_UNAVAILABLE.to_owned()),
                    domain: Some(ERROR_DOMAIN.to_owned()),
                    metadata,
                }));
            }
            tokio::time::sleep(policy.backoff(attempts).min(remaining)).await;
        }
    }
}

/// `msg` as a request with the call deadline `timeout` (sent as `grpc-timeout`, enforced here too).
fn with_deadline<T>(msg: T, timeout: Option<Duration>) -> tonic::Request<T> {
    let mut req = tonic::Request::new(msg);
    if let Some(t) = timeout {
        req.set_timeout(t);
    }
    req
}

/// tonic reports a call that ran out of its deadline as CANCELLED "Timeout expired"; gRPC (and the
/// other clients) call it DEADLINE_EXCEEDED, which is an answer, never retried.
fn deadline_exceeded(s: tonic::Status) -> tonic::Status {
    if retry::timed_out(&s) {
        tonic::Status::deadline_exceeded(format!(
            "{}: no answer from the postcompact daemon within the call's deadline (Options::timeout)",
            s.message()
        ))
    } else {
        s
    }
}

/// The daemon may be gone: a transport UNAVAILABLE (a dead socket, a refused connection; a
/// daemon-raised UNAVAILABLE carries its reason), tonic's UNKNOWN "transport error", its code
/// for a connection that broke (the first call on a channel to a daemon that has since gone), or
/// CANCELLED "operation was canceled", hyper's for a call queued on a connection that closed as
/// the daemon stopped (a call's own deadline is DEADLINE_EXCEEDED by now, never this).
fn is_transport_unavailable(s: &tonic::Status) -> bool {
    matches!(
        s.code(),
        Code::Unavailable | Code::Unknown | Code::Cancelled
    ) && retry::is_transport_failure(s)
}

macro_rules! rpc_methods {
    ($($(#[$doc:meta])* $name:ident($req:ident) -> $resp:ident;)*) => {
        impl Client {
            $(
                $(#[$doc])*
                pub async fn $name(&self, req: pb::$req) -> Result<pb::$resp, Error> {
                    self.call(req, |mut c, r| async move { c.$name(r).await }).await
                }
            )*
        }
    };
}

rpc_methods! {
    /// Daemon version, API version, capabilities, pid, socket and TCP port.
    get_server_info(GetServerInfoRequest) -> GetServerInfoResponse;
    /// The daemon's counters (sessions, agents, cache, content bytes); list the sessions
    /// themselves with [`Client::list_sessions`].
    get_stats(GetStatsRequest) -> GetStatsResponse;
    /// Drops a session and its state.
    close_session(CloseSessionRequest) -> CloseSessionResponse;
    /// Starts a sub-agent with a fresh or cloned file-state cache.
    start_agent(StartAgentRequest) -> StartAgentResponse;
    /// Ends a sub-agent: its state is forgotten and its slot freed.
    end_agent(EndAgentRequest) -> EndAgentResponse;
    /// Merges one agent's file state into another's.
    merge_file_state(MergeFileStateRequest) -> MergeFileStateResponse;
    /// Reads a file through the daemon (numbered text, or the unchanged stub).
    read_file(ReadFileRequest) -> ReadFileResponse;
    /// Records a read the harness made itself.
    record_read(RecordReadRequest) -> RecordReadResponse;
    /// Records an Edit/Write.
    record_write(RecordWriteRequest) -> RecordWriteResponse;
    /// The write precondition (read first, not modified since).
    check_write(CheckWriteRequest) -> CheckWriteResponse;
    /// Read files modified behind the agent's back, with Claude Code's hint.
    check_stale(CheckStaleRequest) -> CheckStaleResponse;
    /// Records an invoked skill.
    record_skill(RecordSkillRequest) -> RecordSkillResponse;
    /// Sets the plan file.
    set_plan(SetPlanRequest) -> SetPlanResponse;
    /// Sets the permission mode.
    set_mode(SetModeRequest) -> SetModeResponse;
    /// Adds or updates a background task.
    upsert_task(UpsertTaskRequest) -> UpsertTaskResponse;
    /// Updates the catalogue and returns the deltas to announce.
    set_catalog(SetCatalogRequest) -> SetCatalogResponse;
    /// Compacts: the restoration attachments and a decision for every candidate.
    compact(CompactRequest) -> CompactResponse;
    /// What `compact` would return, without changing state.
    preview_compact(PreviewCompactRequest) -> PreviewCompactResponse;
    /// Claude Code's rough token estimate.
    estimate_tokens(EstimateTokensRequest) -> EstimateTokensResponse;
    /// Rough estimates for many texts.
    estimate_tokens_batch(EstimateTokensBatchRequest) -> EstimateTokensBatchResponse;
    /// Exact BPE token count.
    count_tokens(CountTokensRequest) -> CountTokensResponse;
    /// Exact counts for many texts.
    count_tokens_batch(CountTokensBatchRequest) -> CountTokensBatchResponse;
    /// Truncates a text to a token budget with a marker.
    truncate_tokens(TruncateTokensRequest) -> TruncateTokensResponse;
    /// Truncates many texts.
    truncate_tokens_batch(TruncateTokensBatchRequest) -> TruncateTokensBatchResponse;
}

impl Client {
    /// Every open session, in session-id order: all the pages of ListSessions
    /// ([`Client::list_sessions_page`] gets one).
    pub async fn list_sessions(&self) -> Result<Vec<pb::SessionInfo>, Error> {
        let mut out = Vec::new();
        let mut token = String::new();
        loop {
            let page = self.list_sessions_page(0, token).await?;
            out.extend(page.sessions);
            if page.next_page_token.is_empty() {
                return Ok(out);
            }
            token = page.next_page_token;
        }
    }

    /// One page of ListSessions: at most `page_size` sessions (0: the daemon's default, 100; at
    /// most 1,000) from `page_token` (`""` for the first page, else the previous page's
    /// `next_page_token`, which is `""` on the last page).
    pub async fn list_sessions_page(
        &self,
        page_size: i32,
        page_token: impl Into<String>,
    ) -> Result<pb::ListSessionsResponse, Error> {
        let req = pb::ListSessionsRequest {
            page_size,
            page_token: page_token.into(),
        };
        self.call(req, |mut c, r| async move { c.list_sessions(r).await })
            .await
    }
}

/// What [`establish_or_start`] found.
enum Started {
    /// A daemon serves: connected.
    Serving(Box<Conn>),
    /// None answers, and the auto-start policy allows no start now (why).
    Deferred(String),
}

/// Connects to the resolved address; when the daemon is absent and auto-start applies, starts
/// it (within the policy; one start at a time, a caller that waited for another's finds the
/// daemon serving), waits for health and connects again.
async fn establish_or_start(opts: &Options, starter: &Starter) -> Result<Started, Error> {
    let env = ProcessEnv;
    let resolved = address::resolve(opts.address.as_deref(), &env)?;
    match establish(opts, resolved.clone(), &env).await {
        Ok(c) => Ok(Started::Serving(Box::new(c))),
        Err(e) if e.is_unavailable() && opts.auto_start_enabled() => {
            let _one_at_a_time = starter.gate.lock().await;
            if let Ok(c) = establish(opts, resolved.clone(), &env).await {
                return Ok(Started::Serving(Box::new(c))); // started meanwhile
            }
            let why = starter.why_not();
            if !why.is_empty() {
                return Ok(Started::Deferred(why));
            }
            start_daemon(opts, &resolved, &env, starter)
                .await
                .map(|c| Started::Serving(Box::new(c)))
        }
        Err(e) => Err(e),
    }
}

/// Opens a channel to the resolved address (eagerly, so a missing daemon shows at once).
async fn establish(opts: &Options, resolved: Resolved, env: &dyn Env) -> Result<Conn, Error> {
    let channel = open_channel(&resolved.address, opts.connect_timeout).await?;
    let token = if resolved.address.is_tcp() {
        match &opts.token {
            Some(t) => Some(t.clone()),
            None => address::resolve_token(&resolved, env)?,
        }
    } else {
        None
    };
    let auth = BearerToken::new(token.as_deref())?;
    Ok(Conn {
        rpc: PostcompactServiceClient::with_interceptor(channel.clone(), auth.clone())
            .max_decoding_message_size(MAX_MESSAGE_SIZE)
            .max_encoding_message_size(MAX_MESSAGE_SIZE),
        health: HealthClient::with_interceptor(channel, auth)
            .max_decoding_message_size(MAX_MESSAGE_SIZE)
            .max_encoding_message_size(MAX_MESSAGE_SIZE),
        resolved,
    })
}

/// A tonic channel to a Unix socket (a custom connector behind a dummy URI) or to TCP.
pub async fn open_channel(addr: &Address, connect_timeout: Duration) -> Result<Channel, Error> {
    let connect_err = |e: &dyn std::fmt::Display| Error::Connect {
        address: addr.to_string(),
        message: e.to_string(),
    };
    match addr {
        Address::Unix(path) => {
            let path = Arc::new(path.clone());
            let endpoint =
                Endpoint::from_static("http://[::]:50051").connect_timeout(connect_timeout);
            endpoint
                .connect_with_connector(tower::service_fn(move |_: Uri| {
                    let path = Arc::clone(&path);
                    async move { UnixStream::connect(path.as_path()).await.map(TokioIo::new) }
                }))
                .await
                .map_err(|e| connect_err(&error_chain(&e)))
        }
        Address::Tcp(hostport) => {
            let endpoint = Endpoint::from_shared(format!("http://{hostport}"))
                .map_err(|e| Error::Config(format!("bad TCP address {hostport}: {e}")))?
                .connect_timeout(connect_timeout);
            endpoint
                .connect()
                .await
                .map_err(|e| connect_err(&error_chain(&e)))
        }
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

/// The daemon executable: the option, else `POSTCOMPACT_BIN`, else `postcompact` on PATH.
pub fn daemon_executable(explicit: Option<&Path>, env: &dyn Env) -> Result<PathBuf, Error> {
    if let Some(p) = explicit {
        return Ok(p.to_path_buf());
    }
    if let Some(p) = env.var(address::ENV_BIN).filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    let path = env.var("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("postcompact"))
        .find(|p| is_executable(p))
        .ok_or_else(|| {
            Error::Start(format!(
                "no `postcompact` executable on PATH; install the daemon or set {}",
                address::ENV_BIN
            ))
        })
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// The `serve` arguments: `serve --detached`, plus `--socket PATH` when the client targets a Unix
/// socket other than the default one (so the daemon comes up where the client looks).
fn serve_args(resolved: &Resolved, env: &dyn Env) -> Vec<String> {
    let mut args = vec!["serve".to_owned(), "--detached".to_owned()];
    if let Address::Unix(p) = &resolved.address {
        if *p != address::default_socket(env) {
            args.push("--socket".into());
            args.push(p.display().to_string());
        }
    }
    args
}

/// Spawns `postcompact serve --detached` (own session, stdin and stdout on /dev/null, stderr to
/// an unlinked temporary file), then polls `grpc.health.v1.Health/Check` until SERVING: an
/// [`Error::Start`] as soon as the daemon exits before serving (its exit status and first
/// error line), or at the start timeout.
async fn start_daemon(
    opts: &Options,
    resolved: &Resolved,
    env: &dyn Env,
    starter: &Starter,
) -> Result<Conn, Error> {
    let bin = daemon_executable(opts.daemon_bin.as_deref(), env)?;
    let args = serve_args(resolved, env);
    let cannot_run = |e: std::io::Error| {
        Error::Start(format!(
            "cannot run {} {}: {e}",
            bin.display(),
            args.join(" ")
        ))
    };
    let errors = stderr_file().map_err(cannot_run)?;
    let mut child =
        spawn_detached(&bin, &args, errors.try_clone().map_err(cannot_run)?).map_err(cannot_run)?;
    starter.spawned();
    let result = wait_started(opts, resolved, env, &mut child, &errors).await;
    match &result {
        Ok(_) => starter.end(""),
        Err(e) => starter.end(&e.to_string()),
    }
    reap_in_background(child);
    result
}

async fn wait_started(
    opts: &Options,
    resolved: &Resolved,
    env: &dyn Env,
    child: &mut Child,
    errors: &std::fs::File,
) -> Result<Conn, Error> {
    use std::os::unix::process::ExitStatusExt;
    let said = || {
        use std::os::unix::fs::FileExt;
        let mut buf = vec![0u8; 64 << 10];
        let n = errors.read_at(&mut buf, 0).unwrap_or(0);
        first_error_line(&String::from_utf8_lossy(&buf[..n]))
    };
    let deadline = Instant::now() + opts.start_timeout;
    let mut delay = Duration::from_millis(25);
    let mut last_err;
    loop {
        // Exited before serving: said at once (an exit 4, another daemon winning the race, is
        // waited for).
        if let Ok(Some(status)) = child.try_wait() {
            if status.code() != Some(EXIT_ALREADY_RUNNING) {
                let how = match (status.code(), status.signal()) {
                    (Some(code), _) => format!("exited with status {code}"),
                    (None, Some(sig)) => format!("was killed by signal {sig}"),
                    _ => format!("ended ({status})"),
                };
                let said = said();
                let said = if said.is_empty() {
                    said
                } else {
                    format!(": {said}")
                };
                return Err(Error::Start(format!(
                    "the postcompact daemon (pid {}) {how} before serving{said}",
                    child.id()
                )));
            }
        }
        // An explicit or environment address stays; otherwise re-resolve, since the new
        // daemon writes server.json once it serves.
        let target = match resolved.source {
            AddressSource::Explicit | AddressSource::Environment => resolved.clone(),
            AddressSource::ServerJson | AddressSource::Default => {
                address::resolve(opts.address.as_deref(), env)?
            }
        };
        match establish(opts, target, env).await {
            Ok(conn) => {
                let mut h = conn.health.clone();
                // Bounded by the start timeout: a hung daemon must not block the wait.
                let left = deadline.saturating_duration_since(Instant::now());
                let req = with_deadline(
                    HealthCheckRequest {
                        service: String::new(),
                    },
                    Some(left.max(Duration::from_millis(50))),
                );
                match h.check(req).await {
                    Ok(r) if r.get_ref().status() == ServingStatus::Serving => return Ok(conn),
                    Ok(r) => last_err = format!("health is {:?}", r.get_ref().status()),
                    Err(s) => last_err = Error::from(s).to_string(),
                }
            }
            Err(e) => last_err = e.to_string(),
        }
        if Instant::now() >= deadline {
            let said = said();
            let said = if said.is_empty() {
                said
            } else {
                format!("; it said: {said}")
            };
            return Err(Error::Start(format!(
                "the daemon (pid {}) did not become healthy within {:?} ({last_err}{said})",
                child.id(),
                opts.start_timeout
            )));
        }
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(Duration::from_millis(250));
    }
}

/// An unlinked temporary file for the daemon's stderr while it starts.
fn stderr_file() -> std::io::Result<std::fs::File> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let path = std::env::temp_dir().join(format!(
        "postcompact-start-{}-{}-{nanos}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)?;
    let _ = std::fs::remove_file(&path);
    Ok(file)
}

fn spawn_detached(bin: &Path, args: &[String], stderr: std::fs::File) -> std::io::Result<Child> {
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new(bin);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(stderr));
    // SAFETY: setsid is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.spawn()
}

/// The daemon outlives us in its own session; a thread reaps it if it exits while we run.
fn reap_in_background(mut child: Child) {
    if let Ok(Some(_)) = child.try_wait() {
        return;
    }
    let _ = std::thread::Builder::new()
        .name("postcompact-reaper".into())
        .spawn(move || {
            let _ = child.wait();
        });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::REASON_METADATA_KEY;
    use std::collections::HashMap;

    struct FakeEnv(HashMap<&'static str, String>);
    impl Env for FakeEnv {
        fn var(&self, name: &str) -> Option<String> {
            self.0.get(name).cloned()
        }
        fn uid(&self) -> u32 {
            7
        }
    }

    /// Harnesses on tokio's multi-thread runtime `tokio::spawn` client calls: the futures must
    /// be `Send` (checked at compile time; nothing runs).
    #[test]
    fn call_futures_are_send() {
        fn is_send<T: Send>(_: T) {}
        let _ = |c: &'static Client, s: &'static crate::Session| {
            is_send(Client::connect());
            is_send(c.health());
            is_send(s.compact());
        };
    }

    #[test]
    fn auto_start_defaults() {
        assert!(Options::default().auto_start_enabled());
        assert!(!Options::default().address("unix:///x").auto_start_enabled());
        assert!(Options::default()
            .address("unix:///x")
            .auto_start(true)
            .auto_start_enabled());
        assert!(!Options::default().auto_start(false).auto_start_enabled());
    }

    #[test]
    fn bearer_token_interceptor() {
        let mut t = BearerToken::new(Some("s3cret")).unwrap();
        assert!(t.is_set());
        let req = t.call(tonic::Request::new(())).unwrap();
        assert_eq!(
            req.metadata().get("authorization").unwrap(),
            "Bearer s3cret"
        );
        let mut none = BearerToken::new(None).unwrap();
        let req = none.call(tonic::Request::new(())).unwrap();
        assert!(req.metadata().get("authorization").is_none());
        assert!(BearerToken::new(Some("bad\ntoken")).is_err());
    }

    #[test]
    fn transport_unavailable_vs_daemon_unavailable() {
        assert!(is_transport_unavailable(&tonic::Status::unavailable(
            "connection refused"
        )));
        let mut md = tonic::metadata::MetadataMap::new();
        md.insert(REASON_METADATA_KEY, "SHUTTING_DOWN".parse().unwrap());
        let s = tonic::Status::with_metadata(Code::Unavailable, "bye", md);
        assert!(!is_transport_unavailable(&s));
        assert!(!is_transport_unavailable(&tonic::Status::internal("x")));
    }

    #[test]
    fn executable_lookup() {
        let env = FakeEnv(HashMap::from([(address::ENV_BIN, "/opt/pc".to_string())]));
        assert_eq!(
            daemon_executable(Some(Path::new("/x/y")), &env).unwrap(),
            PathBuf::from("/x/y")
        );
        assert_eq!(
            daemon_executable(None, &env).unwrap(),
            PathBuf::from("/opt/pc")
        );
        let env = FakeEnv(HashMap::from([(
            "PATH",
            "/nonexistent-pc-a:/nonexistent-pc-b".to_string(),
        )]));
        let err = daemon_executable(None, &env).unwrap_err();
        assert!(matches!(err, Error::Start(_)));
        assert!(err.to_string().contains("POSTCOMPACT_BIN"));
    }

    #[test]
    fn serve_arguments() {
        let env = FakeEnv(HashMap::new());
        let def = address::resolve(None, &env).unwrap();
        assert_eq!(serve_args(&def, &env), vec!["serve", "--detached"]);
        let custom = address::resolve(Some("unix:///tmp/pc-x/d.sock"), &env).unwrap();
        assert_eq!(
            serve_args(&custom, &env),
            vec!["serve", "--detached", "--socket", "/tmp/pc-x/d.sock"]
        );
    }

    #[tokio::test]
    async fn no_daemon_without_auto_start_is_unavailable() {
        let opts = Options::default()
            .address("unix:///tmp/pc-rs-no-such-dir/daemon.sock")
            .connect_timeout(Duration::from_secs(1));
        let err = Client::connect_with(opts).await.unwrap_err();
        assert!(err.is_unavailable(), "{err}");
        assert!(matches!(err, Error::Connect { .. }));
    }

    #[tokio::test]
    async fn auto_start_reports_a_missing_executable() {
        let opts = Options::default()
            .address("unix:///tmp/pc-rs-no-such-dir/daemon.sock")
            .auto_start(true)
            .daemon_bin("/nonexistent/postcompact");
        let err = Client::connect_with(opts).await.unwrap_err();
        assert!(matches!(err, Error::Start(_)), "{err}");
    }

    #[tokio::test]
    async fn a_daemon_that_exits_before_serving_is_reported_at_once() {
        // `true` exits at once without serving: reported then, with its exit status, not after
        // the (long) start timeout.
        let opts = Options::default()
            .address("unix:///tmp/pc-rs-no-such-dir/daemon.sock")
            .auto_start(true)
            .daemon_bin("/bin/true")
            .start_timeout(Duration::from_secs(120));
        let err = Client::connect_with(opts).await.unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, Error::Start(_)), "{msg}");
        assert_eq!(err.reason(), Some("DAEMON_START_FAILED"));
        assert!(msg.contains("exited with status 0 before serving"), "{msg}");
    }

    #[tokio::test]
    async fn a_daemon_that_never_serves_times_out_with_what_it_said() {
        let dir = std::env::temp_dir().join(format!("pc-rs-silent-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bin = dir.join("silent");
        std::fs::write(
            &bin,
            "#!/bin/sh\necho 'postcompact: still thinking' >&2\nexec sleep 2\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let opts = Options::default()
            .address("unix:///tmp/pc-rs-no-such-dir/daemon.sock")
            .auto_start(true)
            .daemon_bin(&bin)
            .start_timeout(Duration::from_millis(300));
        let err = Client::connect_with(opts).await.unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, Error::Start(_)), "{msg}");
        assert!(msg.contains("did not become healthy"), "{msg}");
        assert!(
            msg.contains("it said: postcompact: still thinking"),
            "{msg}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
