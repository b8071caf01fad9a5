//! The Rust driver of benchmark B6 (`bench/b6_clients.py`): times the daemon's real RPCs through
//! this client beside a bare echo call made on the same tonic stack (a channel from
//! [`open_channel`] behind the client's interceptor, `Grpc::unary` with a bytes codec) in the
//! same run.
//!
//! ```sh
//! cargo build --release -p postcompact-client --example bench
//! target/release/examples/bench --daemon unix:///d.sock --echo unix:///e.sock \
//!     --mode small|compact --c 1|16 --calls 2000 --warmup 100 [--rounds 4] [--project DIR]
//! ```
//!
//! `small`: echo of 100 B against EstimateTokens on 100 B. `compact`: echo of 100 KB against
//! Compact of a session that read `DIR/src/module{0..4}.ts` (one session per in-flight
//! worker). The two series alternate in `--rounds` rounds; one JSON object per series is
//! printed on stdout. The runtime is single-threaded: the harness pins the driver to one CPU.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use postcompact_client::client::{open_channel, BearerToken, DEFAULT_CONNECT_TIMEOUT};
use postcompact_client::pb::{self, AttachmentKind};
use postcompact_client::{Address, Client, Options, Session};
use prost::bytes::{Buf, BufMut, Bytes};
use tonic::client::Grpc;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::codegen::http::uri::PathAndQuery;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;
use tonic::Status;

const ECHO_METHOD: &str = "/bench.Echo/Echo";

type Res<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// Bytes in, bytes out: the bare echo has no protobuf.
#[derive(Clone, Copy, Default)]
struct RawCodec;

impl Codec for RawCodec {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = RawCodec;
    type Decoder = RawCodec;

    fn encoder(&mut self) -> RawCodec {
        RawCodec
    }

    fn decoder(&mut self) -> RawCodec {
        RawCodec
    }
}

impl Encoder for RawCodec {
    type Item = Bytes;
    type Error = Status;

    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put_slice(&item);
        Ok(())
    }
}

impl Decoder for RawCodec {
    type Item = Bytes;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Status> {
        let n = src.remaining();
        Ok(Some(src.copy_to_bytes(n)))
    }
}

struct Args {
    daemon: String,
    echo: String,
    mode: String,
    conc: usize,
    calls: usize,
    warmup: usize,
    rounds: usize,
    project: PathBuf,
    token: Option<String>,
}

fn parse_args() -> Res<Args> {
    let mut a = Args {
        daemon: String::new(),
        echo: String::new(),
        mode: "small".into(),
        conc: 1,
        calls: 2000,
        warmup: 100,
        rounds: 4,
        project: PathBuf::new(),
        token: None,
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    for pair in argv.chunks(2) {
        let [flag, value] = pair else {
            return Err(format!("flag {} has no value", pair[0]).into());
        };
        match flag.trim_start_matches('-') {
            "daemon" => a.daemon = value.clone(),
            "echo" => a.echo = value.clone(),
            "mode" => a.mode = value.clone(),
            "c" => a.conc = value.parse()?,
            "calls" => a.calls = value.parse()?,
            "warmup" => a.warmup = value.parse()?,
            "rounds" => a.rounds = value.parse()?,
            "project" => a.project = PathBuf::from(value),
            "token" => a.token = Some(value.clone()).filter(|t| !t.is_empty()),
            other => return Err(format!("unknown flag --{other}").into()),
        }
    }
    if a.daemon.is_empty() || a.echo.is_empty() {
        return Err("--daemon and --echo are required".into());
    }
    Ok(a)
}

/// One competitor's call, cloned into every worker.
#[derive(Clone)]
enum Caller {
    Echo {
        grpc: Grpc<InterceptedService<Channel, BearerToken>>,
        req: Bytes,
        size: usize,
    },
    Estimate {
        client: Client,
        req: pb::EstimateTokensRequest,
    },
    Compact {
        sessions: Arc<Vec<Session>>,
    },
}

impl Caller {
    async fn call(&mut self, worker: usize) -> Res<()> {
        match self {
            Caller::Echo { grpc, req, size } => {
                grpc.ready().await?;
                let out = grpc
                    .unary(
                        tonic::Request::new(req.clone()),
                        PathAndQuery::from_static(ECHO_METHOD),
                        RawCodec,
                    )
                    .await?
                    .into_inner();
                if out.len() != *size {
                    return Err(format!("echo returned {} bytes, want {size}", out.len()).into());
                }
            }
            Caller::Estimate { client, req } => {
                client.estimate_tokens(req.clone()).await?;
            }
            Caller::Compact { sessions } => {
                sessions[worker].compact_with(compact_request()).await?;
            }
        }
        Ok(())
    }
}

fn compact_request() -> pb::CompactRequest {
    pb::CompactRequest {
        skip_hooks: true,
        ..Default::default()
    }
}

struct Series {
    name: String,
    caller: Caller,
    lat: Vec<Duration>,
    wall: Duration,
}

impl Series {
    async fn run(&mut self, calls: usize, conc: usize, record: bool) -> Res<()> {
        let next = Arc::new(AtomicUsize::new(0));
        let start = Instant::now();
        // The client's call futures are not Send (they borrow its `dyn Env`), so the workers are
        // local tasks on this single-threaded runtime.
        let local = tokio::task::LocalSet::new();
        let all = local
            .run_until(async {
                let handles: Vec<_> = (0..conc)
                    .map(|w| {
                        let next = Arc::clone(&next);
                        let mut caller = self.caller.clone();
                        tokio::task::spawn_local(async move {
                            let mut lat = Vec::with_capacity(calls / conc + 1);
                            while next.fetch_add(1, Ordering::Relaxed) < calls {
                                let t0 = Instant::now();
                                caller.call(w).await?;
                                lat.push(t0.elapsed());
                            }
                            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(lat)
                        })
                    })
                    .collect();
                let mut all = Vec::with_capacity(calls);
                for h in handles {
                    all.extend(h.await??);
                }
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(all)
            })
            .await?;
        if record {
            self.wall += start.elapsed();
            self.lat.extend(all);
        }
        Ok(())
    }

    fn json(&self, mode: &str, conc: usize) -> String {
        let mut us: Vec<f64> = self.lat.iter().map(|d| d.as_secs_f64() * 1e6).collect();
        us.sort_by(f64::total_cmp);
        let pct = |q: f64| -> f64 {
            if us.is_empty() {
                return 0.0;
            }
            let k = ((q * (us.len() - 1) as f64).round() as usize).min(us.len() - 1);
            us[k]
        };
        serde_json::json!({
            "client": "rust",
            "series": self.name,
            "mode": mode,
            "concurrency": conc,
            "p50_us": pct(0.5),
            "p99_us": pct(0.99),
            "p999_us": pct(0.999),
            "qps": us.len() as f64 / self.wall.as_secs_f64(),
            "calls": us.len(),
        })
        .to_string()
    }
}

fn echo_request(size: usize) -> Bytes {
    Bytes::from(format!("{size:08}{}", "-".repeat(92)))
}

async fn open_sessions(client: &Client, project: &Path, n: usize) -> Res<Vec<Session>> {
    let root = std::path::absolute(project)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let s = client
            .open_session_with(pb::OpenSessionRequest {
                cwd: root.to_string_lossy().into_owned(),
                // Five 20 KB files restored whole, whatever the default profile's rule.
                policy: Some(pb::RestorePolicy {
                    max_files: Some(5),
                    file_token_budget: Some(50_000),
                    max_tokens_per_file: Some(8000),
                    match_budget: pb::HarnessRule::None as i32,
                    ..Default::default()
                }),
                ..Default::default()
            })
            .await?;
        for f in 0..5 {
            s.read_file(root.join("src").join(format!("module{f}.ts")))
                .await?;
        }
        let res = s.compact_with(compact_request()).await?;
        let files = res
            .attachments
            .iter()
            .filter(|a| a.kind() == AttachmentKind::File)
            .count();
        if files != 5 {
            return Err(format!("compact restored {files} files, want 5").into());
        }
        out.push(s);
    }
    Ok(out)
}

async fn run(a: Args) -> Res<()> {
    let mut opts = Options::default()
        .address(a.daemon.clone())
        .auto_start(false);
    if let Some(t) = &a.token {
        opts = opts.token(t.clone());
    }
    let client = Client::connect_with(opts).await?;
    // The echo server on the same transport stack: the client's connector, behind its interceptor.
    let channel = open_channel(&Address::parse(&a.echo)?, DEFAULT_CONNECT_TIMEOUT).await?;
    let grpc = Grpc::new(InterceptedService::new(channel, BearerToken::default()));

    let (echo_size, real) = match a.mode.as_str() {
        "small" => (
            100,
            Series {
                name: "EstimateTokens 100 B".into(),
                caller: Caller::Estimate {
                    client: client.clone(),
                    req: pb::EstimateTokensRequest {
                        text: vec![b'x'; 100],
                        ..Default::default()
                    },
                },
                lat: Vec::new(),
                wall: Duration::ZERO,
            },
        ),
        "compact" => (
            100 * 1024,
            Series {
                name: "Compact 5x20KB".into(),
                caller: Caller::Compact {
                    sessions: Arc::new(open_sessions(&client, &a.project, a.conc).await?),
                },
                lat: Vec::new(),
                wall: Duration::ZERO,
            },
        ),
        other => return Err(format!("unknown mode {other}").into()),
    };
    let label = if echo_size >= 1024 {
        format!("echo {} KB", echo_size / 1024)
    } else {
        format!("echo {echo_size} B")
    };
    let bare = Series {
        name: label,
        caller: Caller::Echo {
            grpc,
            req: echo_request(echo_size),
            size: echo_size,
        },
        lat: Vec::new(),
        wall: Duration::ZERO,
    };
    let mut all = [bare, real];
    for s in &mut all {
        s.run(a.warmup, a.conc, false).await?;
    }
    let rounds = a.rounds.max(1);
    for r in 0..rounds {
        let base = a.calls / rounds;
        let n = if r == rounds - 1 {
            a.calls - base * (rounds - 1)
        } else {
            base
        };
        for s in &mut all {
            s.run(n, a.conc, true).await?;
        }
    }
    for s in &all {
        println!("{}", s.json(&a.mode, a.conc));
    }
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let result = match parse_args() {
        Ok(a) => run(a).await,
        Err(e) => Err(e),
    };
    if let Err(e) = result {
        eprintln!("bench: {e}");
        std::process::exit(1);
    }
}
