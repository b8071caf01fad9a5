//! A file read from disk and made the model's text in one pass, straight into the protobuf
//! bytes of the answer: a restored file's attachment for Compact ([`restored_file`]) and
//! ReadFile's answer ([`read_answer`]).
//!
//! This is the common case of the Python paths (`restore/files.py`, `service/files.py`), byte
//! for byte: a text file, valid UTF-8, not empty, read whole or as a range, numbered as Claude
//! Code numbers it, with nothing to escape and nothing to cut. Everything else — a read refused
//! or failed, invalid UTF-8, a byte-order mark, a closing reminder tag in the text, a file that
//! grew past the lines asked for — comes back as a [`Skip`] naming why, and the caller takes its
//! general path, which knows every outcome and its message. Whether the result fits the caller's
//! caps is the caller's decision, from the measures returned (UTF-16 units of the text, of its
//! JSON string, of the blocks): the caps, the counters and their rules stay in Python.
//!
//! The wrappers and the Read call (the templates, the profile's strings) are rendered by the
//! caller and passed in; only the file's own bytes are handled here.

use std::borrow::Cow;
use std::path::Path;

use crate::pbwire::fields::{
    attachment as att, attachment_kind, compact_response, file_attachment as fa, placement,
    read_file_response as rf,
};
use crate::pbwire::{
    bytes_field_len, message_field_len, put_bytes, put_len, put_uint, signed, uint_field_len,
};
use crate::readfile::{self, Limits, Range, ReadFailure};
use crate::render;
use crate::tokens;

/// Why the fast path does not apply to a file (the caller's general path takes it).
#[derive(Debug)]
pub enum Skip {
    /// The read was refused or failed.
    Read(ReadFailure),
    /// Not valid UTF-8 (the general path decodes with replacement characters).
    NotUtf8,
    /// Nothing to number (the empty-file or past-the-end warning).
    Empty,
    /// A UTF-8 byte-order mark at the start (not shown).
    Bom,
    /// The text holds a closing `</system-reminder` tag (escaped, with a note).
    Escape,
    /// A head of the file was asked for and the file now has more lines (shown with a marker).
    HeadOnly,
    /// A ReadFile answer over the caller's answer limit (refused with its size).
    AnswerTooLarge,
}

/// The result block's text around the numbered lines (the caller's templates, rendered).
#[derive(Clone, Copy, Debug, Default)]
pub struct Frame<'a> {
    /// Before the numbered lines: the reminder's and the Read result's openings.
    pub prefix: &'a str,
    /// After the numbered lines ("" when the policy has none).
    pub malware: &'a str,
    /// After the reminder: the Read result's and the reminder's endings.
    pub suffix: &'a str,
}

/// One file to restore.
#[derive(Clone, Copy, Debug)]
pub struct FileSpec<'a> {
    /// The real path to read (symlinks resolved, checked against the roots by the caller).
    pub real: &'a Path,
    /// The name has a binary extension.
    pub binary_name: bool,
    /// The first line, 1-based.
    pub start: u64,
    /// How many lines (`None`: to the end).
    pub limit: Option<u64>,
    /// `FileAttachment.path` and `display_path`.
    pub path: &'a str,
    pub display: &'a str,
    /// The attachment's first block (the Read call, wrapped).
    pub call_block: &'a str,
}

/// What reading does in both answers.
#[derive(Clone, Copy, Debug)]
pub struct ReadLimits {
    pub limits: Limits,
    /// A ReadFile's answer limit (see [`readfile::answer_bytes`]); `None` for restoration.
    pub max_answer: Option<u64>,
}

/// A restored file: its attachment as `CompactResponse.attachments` bytes, and its measures.
#[derive(Debug)]
pub struct RestoredFile {
    /// Key, length and the `Attachment` message: joinable into a `CompactResponse`.
    pub framed: Vec<u8>,
    /// The bytes read (the agent's new cache entry).
    pub content: Vec<u8>,
    pub mtime_ns: i128,
    pub total_lines: u64,
    pub num_lines: u64,
    /// `Attachment.tokens`: the rough estimate of the blocks joined by `"\n"`.
    pub tokens: u64,
    /// UTF-16 units of the blocks joined by `"\n"`.
    pub blocks_units: u64,
    /// UTF-16 units of the text as attached (each line's ending `\r` removed).
    pub text_units: u64,
    /// UTF-16 units of `JSON.stringify` of that text.
    pub json_units: u64,
}

/// A ReadFile answer: the `ReadFileResponse` bytes, and what the caller records.
#[derive(Debug)]
pub struct ReadAnswer {
    pub wire: Vec<u8>,
    pub content: Vec<u8>,
    pub mtime_ns: i128,
    pub total_lines: u64,
    pub num_lines: u64,
    /// UTF-16 units of the content, decoded (for the read-token cap).
    pub text_units: u64,
}

struct Read {
    data: Vec<u8>,
    mtime_ns: i128,
    total_lines: u64,
    num_lines: u64,
}

/// Lines `[start, start + limit)` of the file, as `fileread.read_text` reads them: whole (within
/// `max_bytes`) from line 1 without a limit, else streamed. With `head_whole` (restoration) a
/// head, from line 1 with a limit, is read whole too: a file with more lines than the limit is
/// [`Skip::HeadOnly`] (shown with a marker), one over `max_bytes` is left to the general path,
/// which streams it.
fn read(
    real: &Path,
    start: u64,
    limit: Option<u64>,
    lim: ReadLimits,
    head_whole: bool,
) -> Result<Read, Skip> {
    if start <= 1 && (limit.is_none() || head_whole) {
        let w = readfile::read_whole(real, lim.limits).map_err(Skip::Read)?;
        let total = w.total_lines as u64;
        if limit.is_some_and(|l| total > l) {
            return Err(Skip::HeadOnly);
        }
        return Ok(Read {
            data: w.data,
            mtime_ns: w.mtime_ns,
            total_lines: total,
            num_lines: total,
        });
    }
    let limits = Limits {
        max_bytes: u64::MAX,
        ..lim.limits
    };
    let range = Range {
        start,
        limit,
        head_bytes: None,
        max_answer: lim.max_answer,
    };
    let r = readfile::read_range(real, limits, range).map_err(Skip::Read)?;
    Ok(Read {
        data: r.data,
        mtime_ns: r.mtime_ns,
        total_lines: r.total_lines,
        num_lines: r.num_lines,
    })
}

/// The text of `data`: valid UTF-8, not empty, without a byte-order mark on line 1.
fn text_of(data: &[u8], start: u64) -> Result<&str, Skip> {
    let text = simdutf8::basic::from_utf8(data).map_err(|_| Skip::NotUtf8)?;
    if text.is_empty() {
        return Err(Skip::Empty);
    }
    if start <= 1 && text.starts_with('\u{feff}') {
        return Err(Skip::Bom);
    }
    Ok(text)
}

/// `render.strip_cr`: each `"\r\n"` (left to right, not overlapping) as `"\n"`, then a final
/// `"\r"` removed.
pub fn strip_cr(text: &str) -> Cow<'_, str> {
    if memchr::memchr(b'\r', text.as_bytes()).is_none() {
        return Cow::Borrowed(text);
    }
    let mut out = text.replace("\r\n", "\n");
    if out.ends_with('\r') {
        out.pop();
    }
    Cow::Owned(out)
}

/// UTF-16 units of the numbered form of a text of `units` units and `len` bytes whose numbered
/// form takes `numbered_len` bytes: what numbering adds (digits, tabs) and removes (`\r`s) is
/// ASCII, one unit a byte.
fn numbered_units(units: usize, len: usize, numbered_len: usize) -> usize {
    units + numbered_len - len
}

/// What [`restored_file`] gives for a file.
#[derive(Debug)]
pub enum Restored {
    /// The file rendered.
    Rendered(RestoredFile),
    /// The bytes read are the `unchanged_if` bytes: not rendered again (the caller has the
    /// attachment of those bytes already).
    Unchanged {
        mtime_ns: i128,
        total_lines: u64,
        num_lines: u64,
    },
}

/// A restored file's attachment (see the module doc): the Read call block, then the result
/// block `prefix + numbered text + malware + suffix`, and the `FileAttachment` (with the text as
/// attached when `include_content`). With `unchanged_if`, a file whose bytes are those is only
/// read ([`Restored::Unchanged`]).
pub fn restored_file(
    spec: &FileSpec<'_>,
    frame: &Frame<'_>,
    include_content: bool,
    lim: ReadLimits,
    unchanged_if: Option<&[u8]>,
) -> Result<Restored, Skip> {
    let r = read(spec.real, spec.start, spec.limit, lim, true)?;
    if unchanged_if == Some(r.data.as_slice()) {
        return Ok(Restored::Unchanged {
            mtime_ns: r.mtime_ns,
            total_lines: r.total_lines,
            num_lines: r.num_lines,
        });
    }
    render_restored(spec, frame, include_content, r).map(Restored::Rendered)
}

fn render_restored(
    spec: &FileSpec<'_>,
    frame: &Frame<'_>,
    include_content: bool,
    r: Read,
) -> Result<RestoredFile, Skip> {
    let start = spec.start.max(1);
    let raw = text_of(&r.data, start)?;
    let text = strip_cr(raw);
    if text.is_empty() {
        return Err(Skip::Empty); // a lone "\r": nothing left to number
    }
    if render::escape_reminder_tags(&text, false).is_some() {
        // Numbering only separates what a tag could span: no tag in the text, none numbered.
        return Err(Skip::Escape);
    }
    let lines = r.num_lines as usize; // the text's `\n`s + 1 (it is not empty)
    let numbered_len = render::numbered_len_counted(&text, start, lines);
    let text_units = tokens::utf16_len(&text);
    let json_units = render::json_utf16_len(&text);
    let result_len = frame.prefix.len() + numbered_len + frame.malware.len() + frame.suffix.len();
    let blocks_units = tokens::utf16_len(spec.call_block)
        + tokens::utf16_len(frame.prefix)
        + numbered_units(text_units, text.len(), numbered_len)
        + tokens::utf16_len(frame.malware)
        + tokens::utf16_len(frame.suffix)
        + 1; // the "\n" joining the two blocks
    let tok = tokens::estimate_from_units(blocks_units, 4) as u64;
    let content: &[u8] = if include_content {
        text.as_bytes()
    } else {
        b""
    };

    // The `FileAttachment` (`truncated` false: left out), in its fields' order.
    let file_len = bytes_field_len(fa::PATH, spec.path.len())
        + bytes_field_len(fa::DISPLAY_PATH, spec.display.len())
        + bytes_field_len(fa::CONTENT, content.len())
        + uint_field_len(fa::TOTAL_LINES, r.total_lines)
        + uint_field_len(fa::NUM_LINES, r.num_lines)
        + uint_field_len(fa::START_LINE, start);
    // The `Attachment`: its blocks (repeated: each written, even empty), then the file.
    let kind = signed(attachment_kind::FILE);
    let user = signed(placement::USER);
    let att_len = uint_field_len(att::KIND, kind)
        + uint_field_len(att::TOKENS, tok)
        + uint_field_len(att::PLACEMENT, user)
        + message_field_len(att::BLOCKS, spec.call_block.len())
        + message_field_len(att::BLOCKS, result_len)
        + message_field_len(att::FILE, file_len);
    let total = message_field_len(compact_response::ATTACHMENTS, att_len);

    let numbering = render::numbering_room(text.len(), start, lines);
    let mut out = Vec::with_capacity(total - numbered_len + numbering);
    put_len(&mut out, compact_response::ATTACHMENTS, att_len);
    put_uint(&mut out, att::KIND, kind);
    put_uint(&mut out, att::TOKENS, tok);
    put_uint(&mut out, att::PLACEMENT, user);
    put_len(&mut out, att::BLOCKS, spec.call_block.len());
    out.extend_from_slice(spec.call_block.as_bytes());
    put_len(&mut out, att::BLOCKS, result_len);
    out.extend_from_slice(frame.prefix.as_bytes());
    render::number_lines_hinted(&text, start as i64, lines, &mut out);
    out.extend_from_slice(frame.malware.as_bytes());
    out.extend_from_slice(frame.suffix.as_bytes());
    put_len(&mut out, att::FILE, file_len);
    put_bytes(&mut out, fa::PATH, spec.path.as_bytes());
    put_bytes(&mut out, fa::DISPLAY_PATH, spec.display.as_bytes());
    put_bytes(&mut out, fa::CONTENT, content);
    put_uint(&mut out, fa::TOTAL_LINES, r.total_lines);
    put_uint(&mut out, fa::NUM_LINES, r.num_lines);
    put_uint(&mut out, fa::START_LINE, start);
    assert_eq!(out.len(), total, "the sizes computed are the sizes written");

    let (text_units, json_units) = (text_units as u64, json_units as u64);
    drop(text);
    Ok(RestoredFile {
        framed: out,
        content: r.data,
        mtime_ns: r.mtime_ns,
        total_lines: r.total_lines,
        num_lines: r.num_lines,
        tokens: tok,
        blocks_units: blocks_units as u64,
        text_units,
        json_units,
    })
}

/// What a ReadFile answer says besides the file.
#[derive(Clone, Copy, Debug)]
pub struct ReadRequest<'a> {
    pub real: &'a Path,
    pub binary_name: bool,
    pub start: u64,
    pub limit: Option<u64>,
    /// `ReadFileResponse.path`.
    pub path: &'a str,
    /// After the numbered lines ("" when the policy has none).
    pub malware: &'a str,
    /// The entry's timestamp; `None`: the file's mtime in milliseconds.
    pub timestamp_ms: Option<i64>,
}

/// ReadFile's answer (see the module doc): `ReadFileResponse` with the numbered text (the
/// tool result: lines split on `\r?\n`, not escaped) and the bytes read.
pub fn read_answer(req: &ReadRequest<'_>, lim: ReadLimits) -> Result<ReadAnswer, Skip> {
    let r = read(req.real, req.start, req.limit, lim, false)?;
    let start = req.start.max(1);
    if let Some(max) = lim.max_answer {
        if readfile::answer_bytes(r.data.len() as u64, r.num_lines, start) > max {
            return Err(Skip::AnswerTooLarge);
        }
    }
    let text = text_of(&r.data, start)?;
    let lines = r.num_lines as usize;
    let numbered_len = render::numbered_len_counted(text, start, lines);
    let text_units = tokens::utf16_len(text);
    let result_units =
        numbered_units(text_units, text.len(), numbered_len) + tokens::utf16_len(req.malware);
    let tok = tokens::estimate_from_units(result_units, 4) as u64;
    let timestamp = req
        .timestamp_ms
        .unwrap_or_else(|| r.mtime_ns.div_euclid(1_000_000) as i64);
    let result_len = numbered_len + req.malware.len();

    // The `ReadFileResponse` (`unchanged` and `partial` false: left out), in its fields' order.
    let total = bytes_field_len(rf::PATH, req.path.len())
        + bytes_field_len(rf::TEXT, result_len)
        + bytes_field_len(rf::CONTENT, r.data.len())
        + uint_field_len(rf::TIMESTAMP_MS, timestamp as u64)
        + uint_field_len(rf::START_LINE, start)
        + uint_field_len(rf::NUM_LINES, r.num_lines)
        + uint_field_len(rf::TOTAL_LINES, r.total_lines)
        + uint_field_len(rf::TOKENS, tok);
    let numbering = render::numbering_room(text.len(), start, lines);
    let mut out = Vec::with_capacity(total - numbered_len + numbering);
    put_bytes(&mut out, rf::PATH, req.path.as_bytes());
    put_len(&mut out, rf::TEXT, result_len);
    render::number_lines_hinted(text, start as i64, lines, &mut out);
    out.extend_from_slice(req.malware.as_bytes());
    put_bytes(&mut out, rf::CONTENT, &r.data);
    put_uint(&mut out, rf::TIMESTAMP_MS, timestamp as u64);
    put_uint(&mut out, rf::START_LINE, start);
    put_uint(&mut out, rf::NUM_LINES, r.num_lines);
    put_uint(&mut out, rf::TOTAL_LINES, r.total_lines);
    put_uint(&mut out, rf::TOKENS, tok);
    assert_eq!(out.len(), total, "the sizes computed are the sizes written");
    Ok(ReadAnswer {
        wire: out,
        content: r.data,
        mtime_ns: r.mtime_ns,
        total_lines: r.total_lines,
        num_lines: r.num_lines,
        text_units: text_units as u64,
    })
}
