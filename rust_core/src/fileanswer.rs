//! A file read from disk and made the model's text in one pass, straight into the protobuf
//! bytes of the answer: a restored file's attachment for Compact ([`restore_file`]) and
//! ReadFile's answer ([`read_file`]). Both render through [`crate::fileview`], the one renderer
//! of a file as the model sees it, and take every file: any text (invalid UTF-8 decoded as
//! Python's `decode("utf-8", "replace")` does, a byte-order mark, `\r` line ends, closing
//! reminder tags escaped), a whole file or a range, a file over the byte cap or the token cap
//! (cut to the cap, or a note, or left out, as the policy says). What they leave to the caller
//! is what the daemon decides around a file: which files, their paths checked and resolved
//! (roots, deny globs, symlinks), the budget, the decisions' words, the cache entries.
//!
//! Restoration measures a file as the daemon's profiles do (`restore/file_step.py`):
//!
//! - a range, and under the default profile (`cap_rendered`) any file, is capped as the model
//!   sees it: the rough estimate of its blocks (the attachment's `tokens`), and with the exact
//!   counter or a JSON file the counter's count of them too, at most the cap; over it, the most
//!   whole lines that fit with the marker (a head the agent saw of a longer file is shown with
//!   the marker too), else as much of the first line as fits;
//! - under the Claude Code profiles a whole file is capped as Claude Code measures it (the
//!   counter on its text; over a quarter of the cap, the countTokens estimate of `api_units`
//!   UTF-16 units a token), and cut to the longest head within the cap with the marker.

use std::borrow::Cow;
use std::path::Path;

use crate::diskread::{self, Limits, Range, ReadFailure, Whole};
use crate::fileview::{attached_text, truncation_marker, Blocks, Body, Counted, FileTemplates};
use crate::pbwire::fields::{
    attachment as att, attachment_kind, compact_response, file_attachment as fa, oversize_policy,
    placement, read_file_response as rf,
};
use crate::pbwire::{
    bytes_field_len, message_field_len, put_bool, put_bytes, put_len, put_uint, signed,
    uint_field_len,
};
use crate::template::Template;
use crate::textops;
use crate::tokens::{self, estimate_from_units, utf16_len, Counter};
use crate::truncate::{self, Cut};

/// How the policy's counter measures a file (`restore/meter.py`'s `Meter`).
#[derive(Clone, Copy, Debug)]
pub struct Meter<'a> {
    pub counter: Counter,
    /// The file's extension (the rough counter's per-type rate: 2 units a token for JSON).
    pub ext: Option<&'a str>,
}

impl Meter<'_> {
    fn exact(&self) -> bool {
        matches!(self.counter, Counter::Exact(_))
    }

    fn json(&self) -> bool {
        tokens::bytes_per_token_for_ext(self.ext) == 2
    }

    /// `Meter.measure`: the counter's tokens of `text`, at the file's rate (`ext`: false, the
    /// default rate).
    fn measure(&self, text: &str, ext: bool) -> u64 {
        (match self.counter {
            Counter::Exact(enc) => tokens::count(text, enc),
            Counter::Rough => tokens::estimate(text, if ext { self.ext } else { None }),
        }) as u64
    }

    /// `Meter.file_tokens`: a file's tokens as Claude Code weighs them against `cap`.
    fn file_tokens(&self, text: &str, cap: i64, api_units: Option<u64>) -> u64 {
        self.file_tokens_of(text, utf16_len(text), cap, api_units)
    }

    /// [`Meter::file_tokens`] of a text of `units` UTF-16 units.
    fn file_tokens_of(&self, text: &str, units: usize, cap: i64, api_units: Option<u64>) -> u64 {
        let tokens = match self.counter {
            Counter::Exact(enc) => tokens::count(text, enc) as u64,
            Counter::Rough => {
                estimate_from_units(units, tokens::bytes_per_token_for_ext(self.ext)) as u64
            }
        };
        match api_units {
            Some(api) if !self.exact() && tokens as i64 > cap / 4 => {
                (2 * units as u64 + api) / (2 * api)
            }
            _ => tokens,
        }
    }

    /// `Meter.truncate(text, budget, "")`: `text` when it fits, else a head of it within the
    /// budget (the rough one halved for a JSON file, whose rate is twice the cut's).
    fn truncate<'t>(&self, text: &'t str, budget: i64) -> &'t str {
        let budget = budget.max(0) as usize;
        let cut = match self.counter {
            Counter::Exact(enc) => truncate::exact_cut_verified(text, budget, "", enc),
            Counter::Rough => {
                let half = self.json() && self.measure(text, true) > budget as u64;
                truncate::rough_cut(text, if half { budget / 2 } else { budget }, "")
            }
        };
        match cut.expect("an empty marker fits any budget") {
            Cut::Unchanged => text,
            Cut::At(n) => &text[..n],
        }
    }

    /// `Meter.head_lines`: the longest head of whole lines of `text` whose `file_tokens` is
    /// within `cap` ("" when not even the first line is).
    fn head_lines<'t>(&self, text: &'t str, cap: i64, api_units: Option<u64>) -> &'t str {
        let mut budget = cap;
        if let (Some(api), false) = (api_units, self.exact()) {
            budget = cap.min(cap.saturating_mul(api as i64) / 4);
        }
        let mut text = text;
        let mut head = self.truncate(text, budget);
        while !head.is_empty() {
            if head.len() != text.len() {
                head = match head.rfind('\n') {
                    Some(cut) if cut > 0 => &head[..cut],
                    _ => "",
                };
            }
            if self.file_tokens(head, cap, api_units) as i64 <= cap {
                return head;
            }
            text = head;
            budget = (budget * 7 / 8).max(1);
            head = self.truncate(text, budget);
        }
        head
    }
}

/// What a restoration does with a file (per Compact: the policy, the profile's rules and the
/// templates).
#[derive(Clone, Copy, Debug)]
pub struct RestorePlan<'a> {
    pub templates: &'a FileTemplates,
    /// The truncation marker's template.
    pub marker: &'a Template,
    pub malware: bool,
    /// `max_tokens_per_file`.
    pub cap: i64,
    /// The byte cap, the NUL sniff, the inline bound (`binary_name` is each file's).
    pub limits: Limits,
    /// `OversizePolicy`.
    pub oversize: i32,
    pub counter: Counter,
    /// Cap a whole file as the model sees it (`Rules.cap_rendered`), not as Claude Code does.
    pub cap_rendered: bool,
    /// Claude Code's countTokens estimate, UTF-16 units a token (`Rules.api_units_per_token`).
    pub api_units: Option<u64>,
    /// Fill `FileAttachment.content` (else only the blocks have the text).
    pub include_content: bool,
}

/// One file to restore.
#[derive(Clone, Copy, Debug)]
pub struct RestoreSpec<'a> {
    /// The path to open (its symlinks resolved and checked by the caller, or none on the way).
    pub real: &'a Path,
    pub binary_name: bool,
    /// `FileAttachment.path`, and what the Read call and the notes name.
    pub path: &'a str,
    pub display: &'a str,
    /// The lines the agent last had of it: restored as that range (`ranged`), or the whole file
    /// when the range is now past its end.
    pub first: u64,
    pub limit: Option<u64>,
    pub ranged: bool,
    /// The content the cache holds, and the lines of the file it was restored from whole at
    /// the last compaction, and whether that was a range: when the read finds the same bytes
    /// in a file of as many lines, measured alike (as a range or not, or as the model sees it
    /// either way), it is not restored again ([`Restored::Unchanged`]).
    pub unchanged_if: Option<Held<'a>>,
}

/// What the cache holds of a file the last compaction restored whole (see
/// [`RestoreSpec::unchanged_if`]).
#[derive(Clone, Copy, Debug)]
pub struct Held<'a> {
    pub content: &'a [u8],
    /// The lines of the file it was restored from.
    pub total_lines: u64,
    /// Restored as a range.
    pub ranged: bool,
}

/// What became of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileOutcome {
    /// Attached whole (its range whole).
    Restored,
    /// Attached cut to the cap, with the marker.
    Truncated,
    /// Over a cap: the caller notes it by name (`OVERSIZE_POLICY_REFERENCE`, or not even the
    /// marker fits).
    Referenced,
    /// Over a cap: left out (`OVERSIZE_POLICY_SKIP`).
    Dropped,
}

/// A file restored: its attachment (when attached) and what the caller decides and says from.
#[derive(Debug)]
pub struct RestoredFile {
    pub outcome: FileOutcome,
    /// Key, length and the `Attachment` message: joinable into a `CompactResponse` (empty
    /// unless attached).
    pub framed: Vec<u8>,
    /// The cache entry's bytes (the bytes read, or the head of them attached; empty unless
    /// attached).
    pub seed: Vec<u8>,
    pub mtime_ns: i128,
    pub total_lines: u64,
    /// The first line attached, and how many (the entry's offset and lines).
    pub start_line: u64,
    pub num_lines: u64,
    /// The entry's limit.
    pub seed_limit: Option<u64>,
    /// `Attachment.tokens`: the rough estimate of the blocks joined by "\n".
    pub tokens: u64,
    /// The tokens weighed against the cap (of the file as first read: whole, or its range).
    pub measured: u64,
    pub over_cap: bool,
    /// The whole file is over the byte cap (only a head of it was read).
    pub over_size: bool,
    /// Restored as the range asked for (not the whole file).
    pub ranged: bool,
    /// The lines of that range read.
    pub range_lines: u64,
    /// Noted because not even the marker fits the cap.
    pub no_room: bool,
    /// Attached cut to the cap (a head of the text, with the marker).
    pub cut: bool,
    /// UTF-16 units of `JSON.stringify` of the text attached and its marker.
    pub json_units: u64,
    /// The rough estimate of the entry's bytes.
    pub content_tokens: u64,
}

/// A file decided, its entry's bytes not taken yet: the first `seed_len` bytes read.
struct Done {
    file: RestoredFile,
    seed_len: usize,
}

impl Done {
    fn with_seed(mut self, mut data: Vec<u8>) -> RestoredFile {
        if matches!(
            self.file.outcome,
            FileOutcome::Restored | FileOutcome::Truncated
        ) {
            data.truncate(self.seed_len);
            self.file.seed = data;
        }
        self.file
    }
}

impl From<RestoredFile> for Done {
    fn from(file: RestoredFile) -> Self {
        Done { file, seed_len: 0 }
    }
}

/// What [`restore_file`] gives for a file.
#[derive(Debug)]
pub enum Restored {
    File(RestoredFile),
    /// The bytes read are the `unchanged_if` ones: nothing rendered (the caller has the
    /// attachment of those bytes already).
    Unchanged {
        mtime_ns: i128,
        total_lines: u64,
        /// Read as the range asked for (not the whole file).
        ranged: bool,
    },
}

/// A file's bytes as read, and its lines.
struct Read {
    data: Vec<u8>,
    mtime_ns: i128,
    total_lines: u64,
    num_lines: u64,
    /// Cut to the byte cap.
    truncated: bool,
}

impl From<Whole> for Read {
    fn from(w: Whole) -> Self {
        let total = w.total_lines as u64;
        Read {
            data: w.data,
            mtime_ns: w.mtime_ns,
            total_lines: total,
            num_lines: total,
            truncated: false,
        }
    }
}

/// Lines `[first, first + limit)` as `diskread::read_range` reads them (the last one without
/// its line end when the range ends before the file does), from one whole read when the range
/// starts at line 1 and the file is within the byte cap.
fn read_span(
    real: &Path,
    limits: Limits,
    first: u64,
    limit: Option<u64>,
) -> Result<Read, ReadFailure> {
    if let (true, Some(n)) = (first <= 1, limit) {
        match diskread::read_whole(real, limits) {
            Ok(w) => return Ok(head_lines_of(w.into(), n)),
            Err(ReadFailure::TooLarge(_) | ReadFailure::Grew) => {}
            Err(e) => return Err(e),
        }
    }
    let range = Range {
        start: first,
        limit,
        head_bytes: None,
        max_answer: None,
    };
    let limits = Limits {
        max_bytes: u64::MAX,
        ..limits
    };
    let r = diskread::read_range(real, limits, range)?;
    Ok(Read {
        data: r.data,
        mtime_ns: r.mtime_ns,
        total_lines: r.total_lines,
        num_lines: r.num_lines,
        truncated: false,
    })
}

/// The first `n` lines of a whole read, as `read_range` gives them.
fn head_lines_of(mut r: Read, n: u64) -> Read {
    if n == 0 || r.total_lines == 0 {
        r.data.clear();
        r.num_lines = 0;
    } else if n < r.total_lines {
        let end = memchr::memchr_iter(b'\n', &r.data)
            .nth(n as usize - 1)
            .expect("a file of more lines has that many line ends");
        r.data.truncate(end);
        if r.data.last() == Some(&b'\r') {
            r.data.pop();
        }
        r.num_lines = n;
    }
    r
}

/// A file restored (see the module doc): its range when `spec.ranged` (the whole file when the
/// range is empty), else the whole file, or a head of it within the byte cap.
pub fn restore_file(
    spec: &RestoreSpec<'_>,
    plan: &RestorePlan<'_>,
) -> Result<Restored, ReadFailure> {
    let limits = Limits {
        binary_name: spec.binary_name,
        ..plan.limits
    };
    let unchanged = |r: &Read, ranged: bool| match spec.unchanged_if {
        Some(held)
            if held.total_lines == r.total_lines
                && (held.ranged == ranged || plan.cap_rendered)
                && held.content == r.data.as_slice() =>
        {
            Some(Restored::Unchanged {
                mtime_ns: r.mtime_ns,
                total_lines: r.total_lines,
                ranged,
            })
        }
        _ => None,
    };
    let ctx = |first: u64, r: &Read, ranged: bool, over_size: bool| Ctx {
        spec,
        plan,
        meter: Meter {
            counter: plan.counter,
            ext: file_ext(spec.path),
        },
        first,
        total: r.total_lines,
        num_lines: r.num_lines,
        ranged,
        over_size,
    };
    if spec.ranged {
        let r = read_span(spec.real, limits, spec.first, spec.limit)?;
        if !r.data.is_empty() {
            if let Some(same) = unchanged(&r, true) {
                return Ok(same);
            }
            let done = ctx(spec.first, &r, true, false).fitted(&r, spec.limit);
            return Ok(Restored::File(done.with_seed(r.data)));
        }
    }
    let (r, over_size) = match diskread::read_whole(spec.real, limits) {
        Ok(w) => (Read::from(w), false),
        Err(ReadFailure::TooLarge(_) | ReadFailure::Grew) => {
            if plan.oversize == oversize_policy::REFERENCE || plan.oversize == oversize_policy::SKIP
            {
                let r = Read {
                    data: Vec::new(),
                    mtime_ns: 0,
                    total_lines: 0,
                    num_lines: 0,
                    truncated: true,
                };
                let c = ctx(1, &r, false, true);
                return Ok(Restored::File(if plan.oversize == oversize_policy::SKIP {
                    c.dropped(0, false)
                } else {
                    c.referenced(0, false, false)
                }));
            }
            let range = Range {
                start: 1,
                limit: None,
                head_bytes: Some(plan.limits.max_bytes),
                max_answer: None,
            };
            let unbounded = Limits {
                max_bytes: u64::MAX,
                ..limits
            };
            let h = diskread::read_range(spec.real, unbounded, range)?;
            let r = Read {
                data: h.data,
                mtime_ns: h.mtime_ns,
                total_lines: h.total_lines,
                num_lines: h.num_lines,
                truncated: h.truncated,
            };
            (r, true)
        }
        Err(e) => return Err(e),
    };
    if !over_size {
        if let Some(same) = unchanged(&r, false) {
            return Ok(same);
        }
    }
    let c = ctx(1, &r, false, over_size);
    let done = if plan.cap_rendered {
        c.fitted(&r, None)
    } else {
        c.as_claude_code(&r)
    };
    Ok(Restored::File(done.with_seed(r.data)))
}

/// The extension that selects the rough per-type rate (`meter.file_ext`).
fn file_ext(path: &str) -> Option<&str> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem = name.trim_start_matches('.');
    match stem.rfind('.') {
        Some(dot) => Some(&stem[dot + 1..]).filter(|e| !e.is_empty()),
        None => None,
    }
}

/// One file being restored.
struct Ctx<'a, 'p> {
    spec: &'a RestoreSpec<'a>,
    plan: &'a RestorePlan<'p>,
    meter: Meter<'a>,
    first: u64,
    total: u64,
    /// The lines read (of the range, or of the file).
    num_lines: u64,
    ranged: bool,
    over_size: bool,
}

/// An attachment being considered: its blocks and what the file's entry would be.
struct Built<'t> {
    blocks: Blocks<'t>,
    /// The text attached (`FileAttachment.content`).
    text: &'t str,
    truncated: bool,
    num_lines: u64,
    limit: Option<u64>,
    tokens: u64,
    /// UTF-16 units of `JSON.stringify` of the text and its marker (what the budget charges).
    json_units: u64,
}

impl<'a, 'p> Ctx<'a, 'p> {
    /// `restore/file_step.py`'s attachment of `text` (lines `first`.. of the file): with a marker,
    /// `limit` lines of it; `limit` is the entry's (and a range's Read call's).
    fn build<'t>(&self, text: &'t str, marker: String, limit: Option<u64>) -> Built<'t>
    where
        'a: 't,
    {
        self.build_counted(text, None, marker, limit)
    }

    /// [`Ctx::build`] of the whole text read, whose lines are known (`num_lines`) and whose
    /// units the caller counted.
    fn build_whole<'t>(&self, text: &'t str, units: usize, limit: Option<u64>) -> Built<'t>
    where
        'a: 't,
    {
        let lines = self.num_lines as usize;
        let counts = (!text.is_empty()).then_some(Counted { lines, units });
        self.build_counted(text, counts, String::new(), limit)
    }

    fn build_counted<'t>(
        &self,
        text: &'t str,
        counts: Option<Counted>,
        marker: String,
        limit: Option<u64>,
    ) -> Built<'t>
    where
        'a: 't,
    {
        let truncated = !marker.is_empty();
        let json_units =
            (textops::json_utf16_len(text) + textops::json_utf16_len(&marker) - 2) as u64;
        let read_limit = if self.first > 1 { limit } else { None };
        let blocks = Blocks::counted(
            self.plan.templates,
            self.spec.path,
            text,
            counts,
            self.first,
            self.total,
            self.plan.malware,
            Cow::Owned(marker),
            read_limit,
        );
        let tokens = estimate_from_units(blocks.units(), 4) as u64;
        Built {
            blocks,
            text,
            truncated,
            num_lines: if truncated {
                limit.unwrap_or(0)
            } else {
                self.num_lines
            },
            limit,
            tokens,
            json_units,
        }
    }

    fn marker(&self, shown_lines: u64) -> String {
        truncation_marker(self.plan.marker, self.spec.path, shown_lines, self.total)
    }

    /// An attachment's tokens against the cap: its `tokens`, and with the exact counter or a
    /// JSON file the counter's count of its blocks, if more.
    fn measured(&self, b: &Built<'_>) -> u64 {
        match self.meter.counter {
            Counter::Exact(_) => b.tokens.max(self.meter.measure(&b.blocks.joined(), true)),
            Counter::Rough if self.meter.json() => b
                .tokens
                .max(estimate_from_units(b.blocks.units(), 2) as u64),
            Counter::Rough => b.tokens,
        }
    }

    fn dropped(&self, measured: u64, over_cap: bool) -> RestoredFile {
        self.result(
            FileOutcome::Dropped,
            None,
            Vec::new(),
            measured,
            over_cap,
            false,
        )
    }

    fn referenced(&self, measured: u64, over_cap: bool, no_room: bool) -> RestoredFile {
        self.result(
            FileOutcome::Referenced,
            None,
            Vec::new(),
            measured,
            over_cap,
            no_room,
        )
    }

    /// `_fitted`: the whole attachment within the cap as the model sees it, else cut (see the
    /// module doc). `read`: the limit the range was read with.
    fn fitted(&self, r: &Read, read: Option<u64>) -> Done {
        let text = attached_text(&r.data);
        let text: &str = &text;
        let cap = self.plan.cap;
        let limit = if self.first > 1 { read } else { None };
        let head_only = self.first == 1 && read.is_some() && r.num_lines < r.total_lines;
        let whole = self.build_whole(text, utf16_len(text), limit);
        let tokens = self.measured(&whole);
        if tokens as i64 <= cap && !r.truncated && !head_only {
            return self.attach(whole, r, tokens, false, false);
        }
        let over_cap = tokens as i64 > cap;
        if self.plan.oversize == oversize_policy::REFERENCE {
            return self.referenced(tokens, over_cap, false).into();
        }
        let skip = self.plan.oversize == oversize_policy::SKIP;
        if skip && (over_cap || r.truncated) {
            return self.dropped(tokens, over_cap).into();
        }
        // The text's lines (split on "\n"), less the empty "line" after the file's final
        // newline (a range that stops before the end keeps its last line even when empty).
        let ends: Vec<usize> = memchr::memchr_iter(b'\n', text.as_bytes()).collect();
        let pieces = ends.len() + 1;
        let mut lines = pieces;
        if text.ends_with('\n') && self.first + pieces as u64 > self.total {
            lines -= 1;
        }
        let end_of = |i: usize| ends.get(i).copied().unwrap_or(text.len());
        let (mut low, mut high) = (1i64, lines as i64);
        if (r.truncated || over_cap) && !head_only {
            high = lines as i64 - if r.truncated { 0 } else { 1 };
        }
        let mut best = None;
        while low <= high {
            let mid = (low + high) / 2;
            let b = self.attempt(mid as u64, &text[..end_of(mid as usize - 1)]);
            if self.measured(&b) as i64 <= cap {
                best = Some(b);
                low = mid + 1;
            } else {
                high = mid - 1;
            }
        }
        if let Some(b) = best {
            return self.attach(b, r, tokens, over_cap, true);
        }
        if skip {
            return self.dropped(tokens, over_cap).into();
        }
        // Not even the first line fits: as much of it as does (by characters).
        let line = &text[..end_of(0)];
        let mut keep = line.chars().count();
        while keep > 0 {
            keep = keep * 3 / 4;
            let cut = line.char_indices().nth(keep).map_or(line.len(), |(i, _)| i);
            let b = self.attempt(1, &line[..cut]);
            if self.measured(&b) as i64 <= cap {
                return self.attach(b, r, tokens, over_cap, true);
            }
        }
        self.referenced(tokens, over_cap, true).into()
    }

    /// A head of `count` lines (the first of them cut, maybe) with the marker.
    fn attempt<'t>(&self, count: u64, head: &'t str) -> Built<'t>
    where
        'a: 't,
    {
        self.build(head, self.marker(self.first + count - 1), Some(count))
    }

    /// A whole file capped as the Claude Code profiles cap it (see the module doc).
    fn as_claude_code(&self, r: &Read) -> Done {
        let text = attached_text(&r.data);
        let text: &str = &text;
        let cap = self.plan.cap;
        let units = utf16_len(text);
        let tokens = self
            .meter
            .file_tokens_of(text, units, cap, self.plan.api_units);
        if !self.over_size && tokens as i64 <= cap {
            let whole = self.build_whole(text, units, None);
            return self.attach(whole, r, tokens, false, false);
        }
        let over_cap = tokens as i64 > cap;
        if self.plan.oversize == oversize_policy::REFERENCE {
            return self.referenced(tokens, over_cap, false).into();
        }
        if self.plan.oversize == oversize_policy::SKIP {
            return self.dropped(tokens, over_cap).into();
        }
        let probe = self.marker(self.total);
        let room = cap - self.meter.measure(&probe, false) as i64;
        if room <= 0 {
            return self.referenced(tokens, over_cap, true).into();
        }
        let mut head = text;
        if tokens as i64 > room {
            head = self.meter.truncate(text, room);
            if let Some(cut) = head.rfind('\n').filter(|&c| c > 0) {
                head = &head[..cut];
            }
        }
        let shown = if head.is_empty() {
            0
        } else {
            crate::scan::count_newlines(head.as_bytes()) as u64 + 1
        };
        let b = self.build(head, self.marker(shown), Some(shown));
        self.attach(b, r, tokens, over_cap, true)
    }

    fn result(
        &self,
        outcome: FileOutcome,
        r: Option<&Read>,
        framed: Vec<u8>,
        measured: u64,
        over_cap: bool,
        no_room: bool,
    ) -> RestoredFile {
        RestoredFile {
            outcome,
            framed,
            seed: Vec::new(),
            mtime_ns: r.map_or(0, |r| r.mtime_ns),
            total_lines: self.total,
            start_line: self.first,
            num_lines: 0,
            seed_limit: None,
            tokens: 0,
            measured,
            over_cap,
            over_size: self.over_size,
            ranged: self.ranged,
            range_lines: self.num_lines,
            no_room,
            cut: false,
            json_units: 0,
            content_tokens: 0,
        }
    }

    /// `b` attached: its `Attachment` written, the entry's bytes taken from the read.
    fn attach(&self, b: Built<'_>, r: &Read, measured: u64, over_cap: bool, cut: bool) -> Done {
        let framed = self.write(&b);
        let outcome = if b.truncated {
            FileOutcome::Truncated
        } else {
            FileOutcome::Restored
        };
        let seed_len = if b.truncated {
            textops::head_bytes(&r.data, b.text)
        } else {
            r.data.len()
        };
        let mut out = self.result(outcome, Some(r), framed, measured, over_cap, false);
        out.content_tokens = tokens::estimate_bytes(&r.data[..seed_len], None) as u64;
        out.num_lines = b.num_lines;
        out.cut = cut;
        out.seed_limit = b.limit;
        out.tokens = b.tokens;
        out.json_units = b.json_units;
        Done {
            file: out,
            seed_len,
        }
    }

    /// The attachment as `CompactResponse.attachments` bytes.
    fn write(&self, b: &Built<'_>) -> Vec<u8> {
        let spec = self.spec;
        let content: &[u8] = if self.plan.include_content {
            b.text.as_bytes()
        } else {
            b""
        };
        let result_len = b.blocks.result_len();
        let note = b.blocks.note.as_deref();
        // The `FileAttachment`, in its fields' order.
        let file_len = bytes_field_len(fa::PATH, spec.path.len())
            + bytes_field_len(fa::DISPLAY_PATH, spec.display.len())
            + bytes_field_len(fa::CONTENT, content.len())
            + uint_field_len(fa::TRUNCATED, u64::from(b.truncated))
            + uint_field_len(fa::TOTAL_LINES, self.total)
            + uint_field_len(fa::NUM_LINES, b.num_lines)
            + uint_field_len(fa::START_LINE, self.first);
        // The `Attachment`: its blocks (repeated: each written, even empty), then the file.
        let kind = signed(attachment_kind::FILE);
        let user = signed(placement::USER);
        let att_len = uint_field_len(att::KIND, kind)
            + uint_field_len(att::TOKENS, b.tokens)
            + uint_field_len(att::PLACEMENT, user)
            + message_field_len(att::BLOCKS, b.blocks.call.len())
            + message_field_len(att::BLOCKS, result_len)
            + note.map_or(0, |n| message_field_len(att::BLOCKS, n.len()))
            + message_field_len(att::FILE, file_len);
        let total = message_field_len(compact_response::ATTACHMENTS, att_len);
        let mut out = Vec::with_capacity(total - result_len + b.blocks.result_room());
        put_len(&mut out, compact_response::ATTACHMENTS, att_len);
        put_uint(&mut out, att::KIND, kind);
        put_uint(&mut out, att::TOKENS, b.tokens);
        put_uint(&mut out, att::PLACEMENT, user);
        put_bytes_always(&mut out, b.blocks.call.as_bytes());
        put_len(&mut out, att::BLOCKS, result_len);
        b.blocks.write_result(&mut out);
        if let Some(n) = note {
            put_bytes_always(&mut out, n.as_bytes());
        }
        put_len(&mut out, att::FILE, file_len);
        put_bytes(&mut out, fa::PATH, spec.path.as_bytes());
        put_bytes(&mut out, fa::DISPLAY_PATH, spec.display.as_bytes());
        put_bytes(&mut out, fa::CONTENT, content);
        put_bool(&mut out, fa::TRUNCATED, b.truncated);
        put_uint(&mut out, fa::TOTAL_LINES, self.total);
        put_uint(&mut out, fa::NUM_LINES, b.num_lines);
        put_uint(&mut out, fa::START_LINE, self.first);
        assert_eq!(out.len(), total, "the sizes computed are the sizes written");
        out
    }
}

/// A block: a repeated string is written even when empty.
fn put_bytes_always(out: &mut Vec<u8>, data: &[u8]) {
    put_len(out, att::BLOCKS, data.len());
    out.extend_from_slice(data);
}

/// What ReadFile does with a file (per call: the policy, the profile's rules, the templates).
#[derive(Clone, Copy, Debug)]
pub struct ReadPlan<'a> {
    pub templates: &'a FileTemplates,
    pub malware: bool,
    /// `max_read_tokens`: a whole read over it is answered with its first page (`page`), else
    /// refused.
    pub cap: i64,
    pub limits: Limits,
    pub counter: Counter,
    pub api_units: Option<u64>,
    pub page: bool,
}

/// One ReadFile.
#[derive(Clone, Copy, Debug)]
pub struct ReadSpec<'a> {
    pub real: &'a Path,
    pub binary_name: bool,
    /// `ReadFileResponse.path`.
    pub path: &'a str,
    /// Lines `[start, start + limit)`; from line 1 without a limit, the whole file.
    pub start: u64,
    pub limit: Option<u64>,
    /// The entry's timestamp; `None`: the file's mtime in milliseconds.
    pub timestamp_ms: Option<i64>,
    /// Refuse an answer that would take more bytes than this (`diskread::answer_bytes`).
    pub max_answer: Option<u64>,
}

/// A ReadFile answer: the `ReadFileResponse` bytes, and what the caller records.
#[derive(Debug)]
pub struct ReadAnswer {
    pub wire: Vec<u8>,
    /// The bytes answered (the first page's, when paged).
    pub content: Vec<u8>,
    pub mtime_ns: i128,
    pub total_lines: u64,
    pub num_lines: u64,
    /// The first page of a whole read over the token limit.
    pub partial: bool,
}

/// What [`read_file`] gives.
#[derive(Debug)]
pub enum ReadOutcome {
    Answer(ReadAnswer),
    /// A whole read over the token limit, refused (this many tokens).
    TooManyTokens(u64),
}

/// ReadFile's answer: the lines asked for, numbered as Claude Code's Read tool numbers them
/// (not escaped: a tool result), or the first page of a whole file over the token limit.
pub fn read_file(spec: &ReadSpec<'_>, plan: &ReadPlan<'_>) -> Result<ReadOutcome, ReadFailure> {
    let limits = Limits {
        binary_name: spec.binary_name,
        ..plan.limits
    };
    let whole = spec.start <= 1 && spec.limit.is_none();
    let (mut data, mtime_ns, total, mut num_lines) = if whole {
        let w = diskread::read_whole(spec.real, limits)?;
        let total = w.total_lines as u64;
        if let Some(max) = spec.max_answer {
            let need = diskread::answer_bytes(w.data.len() as u64, total, 1);
            if need > max {
                return Err(ReadFailure::AnswerTooLarge(need));
            }
        }
        (w.data, w.mtime_ns, total, total)
    } else {
        let range = Range {
            start: spec.start,
            limit: spec.limit,
            head_bytes: None,
            max_answer: spec.max_answer,
        };
        let limits = Limits {
            max_bytes: u64::MAX,
            ..limits
        };
        let r = diskread::read_range(spec.real, limits, range)?;
        (r.data, r.mtime_ns, r.total_lines, r.num_lines)
    };
    let start = spec.start.max(1);
    let mut marker = String::new();
    let mut paged = false;
    // The text's lines and units, counted once (a whole read within the limit).
    let mut counts = None;
    if whole {
        let meter = Meter {
            counter: plan.counter,
            ext: file_ext(spec.path),
        };
        let text = textops::lossy(&data);
        let units = utf16_len(&text);
        let tokens = meter.file_tokens_of(&text, units, plan.cap, plan.api_units);
        if tokens as i64 <= plan.cap {
            let lines = num_lines as usize;
            counts = Some(Counted { lines, units });
        } else {
            let head = if plan.page {
                meter.head_lines(&text, plan.cap, plan.api_units)
            } else {
                ""
            };
            if head.is_empty() {
                return Ok(ReadOutcome::TooManyTokens(tokens));
            }
            let lines = crate::scan::count_newlines(head.as_bytes()) as u64 + 1;
            drop(text);
            // The page: the first `lines` lines of the bytes ("\n" survives the decoding).
            if let Some(end) = memchr::memchr_iter(b'\n', &data).nth(lines as usize - 1) {
                data.truncate(end);
            }
            num_lines = lines;
            paged = true;
            let cap = plan.cap.max(0) as u64;
            marker = plan
                .templates
                .page_marker(spec.path, lines, total, tokens, cap);
        }
    }
    let partial = paged;
    let text = textops::lossy(&data);
    if counts.is_none() && !data.is_empty() {
        // The lines read (a range's, a page's) are its `\n`s + 1.
        let lines = num_lines as usize;
        counts = Some(Counted {
            lines,
            units: utf16_len(&text),
        });
    }
    let body = Body::counted(
        plan.templates,
        &text,
        counts,
        start,
        total,
        plan.malware,
        Cow::Owned(marker),
        false,
    );
    let tok = estimate_from_units(body.units(), 4) as u64;
    let timestamp = spec
        .timestamp_ms
        .unwrap_or_else(|| mtime_ns.div_euclid(1_000_000) as i64);
    let text_len = body.len();
    // The `ReadFileResponse` (`unchanged` false: left out), in its fields' order.
    let size = bytes_field_len(rf::PATH, spec.path.len())
        + bytes_field_len(rf::TEXT, text_len)
        + bytes_field_len(rf::CONTENT, data.len())
        + uint_field_len(rf::TIMESTAMP_MS, timestamp as u64)
        + uint_field_len(rf::START_LINE, start)
        + uint_field_len(rf::NUM_LINES, num_lines)
        + uint_field_len(rf::TOTAL_LINES, total)
        + uint_field_len(rf::TOKENS, tok)
        + uint_field_len(rf::PARTIAL, u64::from(partial));
    let mut out = Vec::with_capacity(size - text_len + body.room());
    put_bytes(&mut out, rf::PATH, spec.path.as_bytes());
    if text_len > 0 {
        put_len(&mut out, rf::TEXT, text_len);
        body.write(&mut out);
    }
    put_bytes(&mut out, rf::CONTENT, &data);
    put_uint(&mut out, rf::TIMESTAMP_MS, timestamp as u64);
    put_uint(&mut out, rf::START_LINE, start);
    put_uint(&mut out, rf::NUM_LINES, num_lines);
    put_uint(&mut out, rf::TOTAL_LINES, total);
    put_uint(&mut out, rf::TOKENS, tok);
    put_bool(&mut out, rf::PARTIAL, partial);
    assert_eq!(out.len(), size, "the sizes computed are the sizes written");
    drop(body);
    drop(text);
    Ok(ReadOutcome::Answer(ReadAnswer {
        wire: out,
        content: data,
        mtime_ns,
        total_lines: total,
        num_lines,
        partial,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fileview::TemplateTexts;
    use std::fs;

    fn templates() -> FileTemplates {
        FileTemplates::new(&TemplateTexts {
            system_reminder: "<system-reminder>\n{content}\n</system-reminder>",
            read_call: "Called the Read tool with the following input: {input_json}",
            read_result: "Result of calling the Read tool:\n{result}",
            read_path_key: "file_path",
            malware_reminder: "\n\n<m/>\n",
            empty_file_warning: "<w>empty</w>",
            offset_beyond_end_warning: "<w>{start_line} of {total_lines}</w>",
            escaped_note: "Note: {path}",
            read_page_marker: "[{shown_lines}/{total_lines}: {tokens}>{max_tokens}]",
        })
    }

    fn limits(max_bytes: u64) -> Limits {
        Limits {
            max_bytes,
            sniff_bytes: 8192,
            binary_name: false,
            inline: None,
        }
    }

    /// Every kind of text, span, cap and rule: nothing panics (the debug assertions hold:
    /// the lines and units counted are the text's, the sizes computed are the sizes written),
    /// and what is attached within the cap as the model sees it fits it.
    #[test]
    fn every_file_is_answered() {
        let dir = std::env::temp_dir().join(format!("pc-fileanswer-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let texts: Vec<Vec<u8>> = vec![
            b"".to_vec(),
            b"\n".to_vec(),
            b"\xef\xbb\xbfa\r\nb\r\n".to_vec(),
            b"caf\xe9\r\nx</system-reminder>y\n< /System-Reminder>\n".to_vec(),
            "é😀中\r\rx\n".repeat(300).into_bytes(),
            b"x".repeat(5000),
            (0..400)
                .map(|i| format!("line {i} <tag>\n"))
                .collect::<String>()
                .into_bytes(),
        ];
        let tpl = templates();
        let marker = Template::parse("\n[cut {path} {shown_lines}/{total_lines} {next_offset}]");
        for (i, data) in texts.iter().enumerate() {
            for ext in ["txt", "json"] {
                let path = dir.join(format!("f{i}.{ext}"));
                fs::write(&path, data).unwrap();
                let p = path.to_str().unwrap();
                for (cap, max_bytes, oversize, cap_rendered, api) in [
                    (100_000, 1 << 20, oversize_policy::TRUNCATE_HEAD, true, None),
                    (60, 1 << 20, oversize_policy::TRUNCATE_HEAD, true, None),
                    (60, 1 << 20, oversize_policy::TRUNCATE_HEAD, false, Some(3)),
                    (10, 300, oversize_policy::TRUNCATE_HEAD, false, None),
                    (200, 300, oversize_policy::REFERENCE, true, None),
                    (5, 1 << 20, oversize_policy::SKIP, true, None),
                ] {
                    let plan = RestorePlan {
                        templates: &tpl,
                        marker: &marker,
                        malware: true,
                        cap,
                        limits: limits(max_bytes),
                        oversize,
                        counter: Counter::Rough,
                        cap_rendered,
                        api_units: api,
                        include_content: true,
                    };
                    for (first, limit, ranged) in [
                        (1, None, false),
                        (1, Some(2), true),
                        (3, Some(50), true),
                        (500, Some(1), true),
                    ] {
                        let spec = RestoreSpec {
                            real: &path,
                            binary_name: false,
                            path: p,
                            display: p,
                            first,
                            limit,
                            ranged,
                            unchanged_if: None,
                        };
                        let Restored::File(f) = restore_file(&spec, &plan).unwrap() else {
                            panic!("nothing held: nothing unchanged")
                        };
                        let attached = !f.framed.is_empty();
                        assert_eq!(
                            attached,
                            matches!(f.outcome, FileOutcome::Restored | FileOutcome::Truncated)
                        );
                        if attached && (cap_rendered || f.ranged) {
                            assert!(f.tokens as i64 <= cap, "{i} {ext} {cap} {first}");
                        }
                    }
                    let read_plan = ReadPlan {
                        templates: &tpl,
                        malware: true,
                        cap,
                        limits: limits(max_bytes),
                        counter: Counter::Rough,
                        api_units: api,
                        page: cap_rendered,
                    };
                    for (start, limit) in [(1, None), (1, Some(3)), (2, None), (400, Some(9))] {
                        let spec = ReadSpec {
                            real: &path,
                            binary_name: false,
                            path: p,
                            start,
                            limit,
                            timestamp_ms: None,
                            max_answer: None,
                        };
                        match read_file(&spec, &read_plan) {
                            Ok(ReadOutcome::Answer(a)) => {
                                assert!(a.partial <= (start == 1 && limit.is_none()));
                            }
                            Ok(ReadOutcome::TooManyTokens(t)) => assert!(t as i64 > cap),
                            Err(ReadFailure::TooLarge(_)) => assert!(data.len() as u64 > max_bytes),
                            Err(e) => panic!("{e:?}"),
                        }
                    }
                }
            }
        }
        fs::remove_dir_all(&dir).unwrap();
    }
}
