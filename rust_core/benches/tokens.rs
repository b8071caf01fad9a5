//! Criterion benchmarks of the token functions on an offline corpus (20 KB chunks of the Python
//! stdlib, license texts, generated JSON and CJK gettext catalogues found on the machine).

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;

use _core::fastcount;
use _core::tokens::{self, Counter, Encoding};
use _core::truncate;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

const CHUNK: usize = 20 * 1024;

fn python_stdlib() -> Option<PathBuf> {
    let out = Command::new("python3")
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['stdlib'])",
        ])
        .output()
        .ok()?;
    let p = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    p.is_dir().then_some(p)
}

fn read_tree(dir: &Path, ext: &str, limit: usize, out: &mut String) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if out.len() >= limit {
            return;
        }
        if p.is_dir() {
            if !p.ends_with("site-packages") && !p.ends_with("test") {
                read_tree(&p, ext, limit, out);
            }
        } else if p.extension().is_some_and(|e| e == ext) {
            if let Ok(s) = std::fs::read_to_string(&p) {
                out.push_str(&s);
            }
        }
    }
}

fn code() -> String {
    let mut s = String::new();
    if let Some(lib) = python_stdlib() {
        read_tree(&lib, "py", 400_000, &mut s);
    }
    if s.is_empty() {
        s = "def f(x):\n    return [i * 2 for i in range(x) if i % 3]\n".repeat(8000);
    }
    s
}

fn prose() -> String {
    let mut s = String::new();
    for name in ["GPL-3", "Apache-2.0", "LGPL-2.1", "MPL-2.0", "Artistic"] {
        if let Ok(t) = std::fs::read_to_string(Path::new("/usr/share/common-licenses").join(name)) {
            s.push_str(&t);
        }
    }
    if s.is_empty() {
        s = "The licenses for most software are designed to take away your freedom. ".repeat(3000);
    }
    s
}

fn json() -> String {
    let mut s = String::from("[\n");
    for i in 0..4000 {
        s.push_str(&format!(
            "  {{\n    \"id\": {i},\n    \"path\": \"/home/user/project/src/module_{m}/file_{i}.py\",\n    \"size\": {sz},\n    \"tags\": [\"alpha\", \"beta\"],\n    \"ok\": {ok}\n  }},\n",
            m = i % 17,
            sz = i * 37 % 100_000,
            ok = i % 2 == 0
        ));
    }
    s.push_str("  {}\n]\n");
    s
}

/// Translations from the zh_CN / ja / ko gettext catalogues on the machine.
fn cjk() -> String {
    let mut s = String::new();
    for lang in ["zh_CN", "ja", "ko"] {
        let dir = Path::new("/usr/share/locale")
            .join(lang)
            .join("LC_MESSAGES");
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for p in paths {
            if let Ok(data) = std::fs::read(&p) {
                mo_translations(&data, &mut s);
            }
            if s.len() > 300_000 * (1 + usize::from(lang != "zh_CN")) {
                break;
            }
        }
    }
    if s.len() < 100_000 {
        s = "日本語のテキストと中文文本，한국어 텍스트。".repeat(3000);
    }
    s
}

fn mo_translations(data: &[u8], out: &mut String) {
    let u32_at = |off: usize, le: bool| -> Option<usize> {
        let b: [u8; 4] = data.get(off..off + 4)?.try_into().ok()?;
        Some(if le {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        } as usize)
    };
    let le = match data.get(..4) {
        Some([0xde, 0x12, 0x04, 0x95]) => true,
        Some([0x95, 0x04, 0x12, 0xde]) => false,
        _ => return,
    };
    let (Some(n), Some(table)) = (u32_at(8, le), u32_at(16, le)) else {
        return;
    };
    for i in 0..n {
        let (Some(len), Some(off)) = (u32_at(table + 8 * i, le), u32_at(table + 8 * i + 4, le))
        else {
            return;
        };
        if let Some(Ok(t)) = data.get(off..off + len).map(std::str::from_utf8) {
            out.push_str(t);
            out.push('\n');
        }
    }
}

fn chunk(s: &str) -> &str {
    let mut end = CHUNK.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn corpus() -> Vec<(&'static str, String)> {
    vec![
        ("code", code()),
        ("prose", prose()),
        ("json", json()),
        ("cjk", cjk()),
    ]
}

fn bench_estimate(c: &mut Criterion) {
    let mut g = c.benchmark_group("estimate_20k");
    for (name, text) in corpus() {
        let t = chunk(&text);
        g.throughput(Throughput::Bytes(t.len() as u64));
        g.bench_with_input(BenchmarkId::new("utf16_units_valid", name), t, |b, t| {
            b.iter(|| tokens::utf16_units_valid(black_box(t.as_bytes())))
        });
        g.bench_with_input(BenchmarkId::new("estimate_bytes", name), t, |b, t| {
            b.iter(|| tokens::estimate_bytes(black_box(t.as_bytes()), None))
        });
        g.bench_with_input(BenchmarkId::new("std_from_utf8", name), t, |b, t| {
            b.iter(|| std::str::from_utf8(black_box(t.as_bytes())).is_ok())
        });
    }
    g.finish();
}

fn bench_count(c: &mut Criterion) {
    let mut g = c.benchmark_group("count_20k");
    g.sample_size(20);
    for (name, text) in corpus() {
        let t = chunk(&text);
        g.throughput(Throughput::Bytes(t.len() as u64));
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let _ = tokens::count("warm up", enc);
            g.bench_with_input(BenchmarkId::new(format!("ours/{enc}"), name), t, |b, t| {
                b.iter(|| tokens::count(black_box(t), enc))
            });
            g.bench_with_input(BenchmarkId::new(format!("split/{enc}"), name), t, |b, t| {
                b.iter(|| enc.tokenizer().split(black_box(t)).count())
            });
            g.bench_with_input(
                BenchmarkId::new(format!("bpe_openai/{enc}"), name),
                t,
                |b, t| b.iter(|| enc.tokenizer().count(black_box(t))),
            );
        }
    }
    g.finish();
}

/// Consecutive pieces of about `size` bytes (cut on character boundaries) of the first
/// `total` bytes of `text`.
fn pieces_of(text: &str, size: usize, total: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let stop = total.min(text.len());
    while start < stop {
        let mut end = (start + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[start..end]);
        start = end;
    }
    out
}

/// Our own tables against fastokens' (`fastcount`) by text size, each iteration counting 256 KB
/// of different pieces of that size (text seen once per iteration, as a daemon counts new
/// files): where `fastcount::MIN_BYTES` comes from (below it fastokens' cost per call loses).
fn bench_count_by_size(c: &mut Criterion) {
    let mut g = c.benchmark_group("count_by_size");
    g.sample_size(10);
    let enc = Encoding::O200kBase;
    let _ = tokens::count_own("warm up", enc);
    let _ = fastcount::count("warm up", enc);
    for (name, text) in corpus() {
        for size in [16, 32, 64, 128, 1024, CHUNK] {
            let pieces = pieces_of(&text, size, 256 * 1024);
            let bytes: usize = pieces.iter().map(|p| p.len()).sum();
            g.throughput(Throughput::Bytes(bytes as u64));
            g.bench_with_input(
                BenchmarkId::new(format!("own/{name}"), size),
                &pieces,
                |b, p| {
                    b.iter(|| {
                        p.iter()
                            .map(|t| tokens::count_own(black_box(t), enc))
                            .sum::<usize>()
                    })
                },
            );
            g.bench_with_input(
                BenchmarkId::new(format!("fastokens/{name}"), size),
                &pieces,
                |b, p| {
                    b.iter(|| {
                        p.iter()
                            .map(|t| fastcount::count(black_box(t), enc).unwrap_or(0))
                            .sum::<usize>()
                    })
                },
            );
        }
    }
    g.finish();
}

fn bench_truncate(c: &mut Criterion) {
    let mut g = c.benchmark_group("truncate");
    g.sample_size(20);
    let code = code();
    let marker = "\n\n[... truncated]";
    for size in [20 * 1024, 100 * 1024] {
        let t = &code[..size.min(code.len())];
        for max in [1000, 10_000] {
            g.bench_function(format!("rough/{size}/{max}"), |b| {
                b.iter(|| truncate::truncate_to_tokens(black_box(t), max, marker, Counter::Rough))
            });
            g.bench_function(format!("exact/{size}/{max}"), |b| {
                b.iter(|| {
                    truncate::truncate_to_tokens(
                        black_box(t),
                        max,
                        marker,
                        Counter::Exact(Encoding::O200kBase),
                    )
                })
            });
        }
    }
    g.finish();
}

criterion_group!(
    benches,
    bench_estimate,
    bench_count,
    bench_count_by_size,
    bench_truncate
);
criterion_main!(benches);
