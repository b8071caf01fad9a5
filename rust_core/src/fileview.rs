//! A file as the model sees it: the one renderer of a restored file's attachment (its blocks:
//! the Read call, the Read result, the note when its text had to be escaped) and of a Read
//! tool result (ReadFile's text). Everything here is the daemon's templates (`render.Templates`)
//! applied to a file's text; [`crate::fileanswer`] decides what text (whole, a range, a head
//! cut to the cap) and writes the answers.
//!
//! The blocks are measured (bytes, UTF-16 units) without being built, then written once,
//! straight into the answer's bytes.

use std::borrow::Cow;

use crate::template::{number, Piece, Template};
use crate::textops;
use crate::tokens::utf16_len;

/// The templates of a file's blocks (the `render.Templates` fields of the same names).
#[derive(Clone, Copy, Debug, Hash)]
pub struct TemplateTexts<'a> {
    pub system_reminder: &'a str,
    pub read_call: &'a str,
    pub read_result: &'a str,
    pub read_path_key: &'a str,
    pub malware_reminder: &'a str,
    pub empty_file_warning: &'a str,
    pub offset_beyond_end_warning: &'a str,
    pub escaped_note: &'a str,
    pub read_page_marker: &'a str,
}

/// The templates of a file's blocks, parsed.
#[derive(Debug, PartialEq, Eq)]
pub struct FileTemplates {
    reminder: Template,
    read_call: Template,
    path_key: String,
    malware: String,
    empty_warning: String,
    beyond_end: Template,
    escaped_note: Template,
    page_marker: Template,
    /// The Read result block with its body left open: the body goes between each two parts
    /// (the reminder around the Read result around the body, each placeholder as often as its
    /// template has it).
    frame: Vec<String>,
    frame_len: usize,
    frame_units: usize,
}

impl FileTemplates {
    pub fn new(t: &TemplateTexts<'_>) -> Self {
        let reminder = Template::parse(t.system_reminder);
        let inner = Template::parse(t.read_result).split("result", |_, _| {});
        let mut frame = vec![String::new()];
        for p in reminder.pieces() {
            match p {
                Piece::Lit(s) => frame.last_mut().expect("never empty").push_str(s),
                Piece::Field(name) if name == "content" => {
                    for (i, part) in inner.iter().enumerate() {
                        if i > 0 {
                            frame.push(String::new());
                        }
                        frame.last_mut().expect("never empty").push_str(part);
                    }
                }
                Piece::Field(_) => {}
            }
        }
        FileTemplates {
            read_call: Template::parse(t.read_call),
            path_key: t.read_path_key.to_owned(),
            malware: t.malware_reminder.to_owned(),
            empty_warning: t.empty_file_warning.to_owned(),
            beyond_end: Template::parse(t.offset_beyond_end_warning),
            escaped_note: Template::parse(t.escaped_note),
            page_marker: Template::parse(t.read_page_marker),
            frame_len: frame.iter().map(String::len).sum(),
            frame_units: frame.iter().map(|p| utf16_len(p)).sum(),
            frame,
            reminder,
        }
    }

    /// `text` wrapped in the reminder.
    fn wrap(&self, text: &str) -> String {
        self.reminder.render(|name, out| {
            if name == "content" {
                out.push_str(text)
            }
        })
    }

    /// The Read call block (a restored file's first): the call with its input as JSON (the
    /// path, and the range's offset and limit when given), escaped, wrapped.
    pub fn call_block(&self, path: &str, offset: Option<u64>, limit: Option<u64>) -> String {
        let mut json = String::from("{");
        textops::json_quote(&mut json, &self.path_key);
        json.push(':');
        textops::json_quote(&mut json, path);
        if let Some(offset) = offset {
            json.push_str(",\"offset\":");
            number(&mut json, offset);
        }
        if let Some(limit) = limit {
            json.push_str(",\"limit\":");
            number(&mut json, limit);
        }
        json.push('}');
        let call = self.read_call.render(|name, out| {
            if name == "input_json" {
                out.push_str(&json)
            }
        });
        let call = textops::escape_reminder_tags(&call, false).unwrap_or(call);
        self.wrap(&call)
    }

    /// The note after a file whose text had closing tags escaped, wrapped.
    pub fn note_block(&self, path: &str) -> String {
        let note = self.escaped_note.render(|name, out| {
            if name == "path" {
                textops::note_path(out, path)
            }
        });
        self.wrap(&note)
    }

    /// What a Read result says instead of numbered text when there is none: the empty-file
    /// warning (a file of no lines), else the past-the-end one.
    fn warning(&self, start_line: u64, total_lines: u64) -> String {
        if total_lines == 0 {
            return self.empty_warning.clone();
        }
        self.beyond_end.render(|name, out| match name {
            "start_line" => number(out, start_line),
            "total_lines" => number(out, total_lines),
            _ => {}
        })
    }

    /// The malware reminder, or "" without it.
    pub fn malware(&self, on: bool) -> &str {
        if on {
            &self.malware
        } else {
            ""
        }
    }

    /// The note after the first page of a whole ReadFile over its token limit.
    pub fn page_marker(
        &self,
        path: &str,
        shown_lines: u64,
        total_lines: u64,
        tokens: u64,
        max_tokens: u64,
    ) -> String {
        self.page_marker.render(|name, out| match name {
            "path" => out.push_str(path),
            "shown_lines" => number(out, shown_lines),
            "total_lines" => number(out, total_lines),
            "next_offset" => number(out, shown_lines + 1),
            "tokens" => number(out, tokens),
            "max_tokens" => number(out, max_tokens),
            _ => {}
        })
    }
}

/// A truncation marker template (`{path}`, `{shown_lines}`, `{total_lines}`, `{next_offset}`)
/// rendered, the path made safe for a note.
pub fn truncation_marker(marker: &Template, path: &str, shown_lines: u64, total: u64) -> String {
    marker.render(|name, out| match name {
        "path" => textops::note_path(out, path),
        "shown_lines" => number(out, shown_lines),
        "total_lines" => number(out, total),
        "next_offset" => number(out, shown_lines + 1),
        _ => {}
    })
}

/// A Read tool result (`render.read_tool_result`): the text numbered from its first line (a
/// byte-order mark on line 1 not shown; with `escape`, closing reminder tags escaped), the
/// marker and the malware reminder; or, when there is no text, the warning alone.
#[derive(Debug)]
pub enum Body<'a> {
    Warning(String),
    Text {
        text: &'a str,
        first: u64,
        lines: usize,
        numbered_len: usize,
        /// UTF-16 units of the numbered text.
        numbered_units: usize,
        /// The numbered text with its closing tags escaped, when it has any.
        escaped: Option<String>,
        marker: Cow<'a, str>,
        malware: &'a str,
    },
}

/// What the caller already counted of a text: its lines (`\n`s + 1) and UTF-16 units.
#[derive(Clone, Copy, Debug)]
pub struct Counted {
    pub lines: usize,
    pub units: usize,
}

impl<'a> Body<'a> {
    pub fn new(
        tpl: &'a FileTemplates,
        content: &'a str,
        start_line: u64,
        total_lines: u64,
        malware: bool,
        marker: Cow<'a, str>,
        escape: bool,
    ) -> Self {
        Self::counted(
            tpl,
            content,
            None,
            start_line,
            total_lines,
            malware,
            marker,
            escape,
        )
    }

    /// [`Body::new`] of a `content` whose lines and units the caller counted (`counts`).
    #[allow(clippy::too_many_arguments)]
    pub fn counted(
        tpl: &'a FileTemplates,
        content: &'a str,
        counts: Option<Counted>,
        start_line: u64,
        total_lines: u64,
        malware: bool,
        marker: Cow<'a, str>,
        escape: bool,
    ) -> Self {
        let text = if start_line == 1 {
            content.strip_prefix('\u{feff}').unwrap_or(content)
        } else {
            content
        };
        if text.is_empty() {
            return Body::Warning(tpl.warning(start_line, total_lines));
        }
        // A byte-order mark is one unit, and no line.
        let counts = counts.map(|c| Counted {
            lines: c.lines,
            units: c.units - (content.len() - text.len()) / 3,
        });
        let lines = counts.map_or_else(
            || crate::scan::count_newlines(text.as_bytes()) + 1,
            |c| c.lines,
        );
        debug_assert_eq!(lines, crate::scan::count_newlines(text.as_bytes()) + 1);
        let units = counts.map_or_else(|| utf16_len(text), |c| c.units);
        debug_assert_eq!(units, utf16_len(text));
        let numbered_len = textops::numbered_len_counted(text, start_line, lines);
        // What numbering adds (digits, tabs) and removes (a `\r` before a `\n`) is ASCII.
        let numbered_units = units + numbered_len - text.len();
        let escaped = if escape && textops::closing_tags_by_line(text) > 0 {
            textops::escape_reminder_tags(&textops::number_lines(text, start_line as i64), false)
        } else {
            None
        };
        let (numbered_len, numbered_units) = match &escaped {
            // Each `<` escaped adds 3 ASCII bytes.
            Some(e) => (e.len(), numbered_units + e.len() - numbered_len),
            None => (numbered_len, numbered_units),
        };
        Body::Text {
            text,
            first: start_line,
            lines,
            numbered_len,
            numbered_units,
            escaped,
            marker,
            malware: tpl.malware(malware),
        }
    }

    /// Whether closing tags in the text were escaped.
    pub fn escaped(&self) -> bool {
        matches!(
            self,
            Body::Text {
                escaped: Some(_),
                ..
            }
        )
    }

    pub fn len(&self) -> usize {
        match self {
            Body::Warning(w) => w.len(),
            Body::Text {
                numbered_len,
                marker,
                malware,
                ..
            } => numbered_len + marker.len() + malware.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn units(&self) -> usize {
        match self {
            Body::Warning(w) => utf16_len(w),
            Body::Text {
                numbered_units,
                marker,
                malware,
                ..
            } => numbered_units + utf16_len(marker) + utf16_len(malware),
        }
    }

    pub fn write(&self, out: &mut Vec<u8>) {
        match self {
            Body::Warning(w) => out.extend_from_slice(w.as_bytes()),
            Body::Text {
                text,
                first,
                lines,
                escaped,
                marker,
                malware,
                ..
            } => {
                match escaped {
                    Some(e) => out.extend_from_slice(e.as_bytes()),
                    None => textops::number_lines_hinted(text, *first as i64, *lines, out),
                }
                out.extend_from_slice(marker.as_bytes());
                out.extend_from_slice(malware.as_bytes());
            }
        }
    }

    /// The room [`Body::write`] may use past what it writes (see `textops::numbering_room`).
    pub fn room(&self) -> usize {
        match self {
            Body::Text {
                text,
                first,
                lines,
                escaped: None,
                ..
            } => textops::numbering_room(text.len(), *first, *lines),
            _ => self.len(),
        }
    }

    pub fn to_text(&self) -> String {
        let mut out = Vec::with_capacity(self.room());
        self.write(&mut out);
        String::from_utf8(out).expect("UTF-8 in, UTF-8 out")
    }
}

/// A restored file's blocks (`render.file_blocks`): the Read call, the Read result (the frame
/// around the escaped body) and, when the text had closing tags to escape, the note.
#[derive(Debug)]
pub struct Blocks<'a> {
    tpl: &'a FileTemplates,
    pub call: String,
    pub body: Body<'a>,
    pub note: Option<String>,
}

impl<'a> Blocks<'a> {
    /// The blocks of `text` (lines `start_line`.. of a file of `total_lines`): a range
    /// (`start_line` > 1) has the offset and `read_limit` in its Read call.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        tpl: &'a FileTemplates,
        path: &str,
        text: &'a str,
        start_line: u64,
        total_lines: u64,
        malware: bool,
        marker: Cow<'a, str>,
        read_limit: Option<u64>,
    ) -> Self {
        Self::counted(
            tpl,
            path,
            text,
            None,
            start_line,
            total_lines,
            malware,
            marker,
            read_limit,
        )
    }

    /// [`Blocks::new`] of a `text` whose lines and units the caller counted (`counts`).
    #[allow(clippy::too_many_arguments)]
    pub fn counted(
        tpl: &'a FileTemplates,
        path: &str,
        text: &'a str,
        counts: Option<Counted>,
        start_line: u64,
        total_lines: u64,
        malware: bool,
        marker: Cow<'a, str>,
        read_limit: Option<u64>,
    ) -> Self {
        let offset = (start_line > 1).then_some(start_line);
        let call = tpl.call_block(path, offset, offset.and(read_limit));
        let body = Body::counted(
            tpl,
            text,
            counts,
            start_line,
            total_lines,
            malware,
            marker,
            true,
        );
        let note = body.escaped().then(|| tpl.note_block(path));
        Blocks {
            tpl,
            call,
            body,
            note,
        }
    }

    /// Bytes of the Read result block.
    pub fn result_len(&self) -> usize {
        self.tpl.frame_len + (self.tpl.frame.len() - 1) * self.body.len()
    }

    /// UTF-16 units of the blocks joined by "\n".
    pub fn units(&self) -> usize {
        let result = self.tpl.frame_units + (self.tpl.frame.len() - 1) * self.body.units();
        let note = self.note.as_deref().map_or(0, |n| utf16_len(n) + 1);
        utf16_len(&self.call) + 1 + result + note
    }

    /// The Read result block appended to `out`.
    pub fn write_result(&self, out: &mut Vec<u8>) {
        let frame = &self.tpl.frame;
        for (i, part) in frame.iter().enumerate() {
            if i > 0 {
                self.body.write(out);
            }
            out.extend_from_slice(part.as_bytes());
        }
    }

    /// The room [`Blocks::write_result`] may use past what it writes.
    pub fn result_room(&self) -> usize {
        self.result_len() + self.body.room().saturating_sub(self.body.len())
    }

    /// The blocks as text.
    pub fn to_strings(&self) -> Vec<String> {
        let mut result = Vec::with_capacity(self.result_room());
        self.write_result(&mut result);
        let mut out = vec![
            self.call.clone(),
            String::from_utf8(result).expect("UTF-8 in, UTF-8 out"),
        ];
        out.extend(self.note.clone());
        out
    }

    /// The blocks joined by "\n" (what the exact counter counts).
    pub fn joined(&self) -> String {
        self.to_strings().join("\n")
    }
}

/// `Cow` of a decoded file's text as attached: each line's ending `\r` removed.
pub fn attached_text(data: &[u8]) -> Cow<'_, str> {
    match textops::lossy(data) {
        Cow::Borrowed(text) => textops::strip_cr(text),
        Cow::Owned(text) => match textops::strip_cr(&text) {
            Cow::Borrowed(_) => Cow::Owned(text),
            Cow::Owned(stripped) => Cow::Owned(stripped),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MALWARE: &str = "\n\n<system-reminder>\nmalware\n</system-reminder>\n";

    fn texts(reminder: &'static str, read_result: &'static str) -> TemplateTexts<'static> {
        TemplateTexts {
            system_reminder: reminder,
            read_call: "Called the Read tool with the following input: {input_json}",
            read_result,
            read_path_key: "file_path",
            malware_reminder: MALWARE,
            empty_file_warning: "<w>empty</w>",
            offset_beyond_end_warning: "<w>{start_line} of {total_lines}</w>",
            escaped_note: "Note: {path} escaped",
            read_page_marker: "[{shown_lines}/{total_lines}]",
        }
    }

    #[test]
    fn blocks_are_the_call_and_the_result() {
        let tpl = FileTemplates::new(&texts(
            "<system-reminder>\n{content}\n</system-reminder>",
            "Result of calling the Read tool:\n{result}",
        ));
        let b = Blocks::new(
            &tpl,
            "/p/a.ts",
            "const a = 1\n",
            1,
            2,
            true,
            "".into(),
            None,
        );
        let got = b.to_strings();
        assert_eq!(
            got,
            vec![
                "<system-reminder>\nCalled the Read tool with the following input: \
                 {\"file_path\":\"/p/a.ts\"}\n</system-reminder>"
                    .to_owned(),
                format!(
                    "<system-reminder>\nResult of calling the Read tool:\n1\tconst a = 1\n2\t\
                     {MALWARE}\n</system-reminder>"
                ),
            ]
        );
        assert_eq!(b.units(), utf16_len(&got.join("\n")));
        assert_eq!(b.result_len(), got[1].len());
    }

    #[test]
    fn repeated_and_missing_placeholders_and_escapes() {
        let tpl = FileTemplates::new(&texts("<r>{content}|{content}</r>", "{{R}} {result}"));
        let text = "a</system-reminder>\n";
        let b = Blocks::new(&tpl, "/p/x", text, 3, 9, false, "[m]".into(), Some(2));
        let got = b.to_strings();
        assert_eq!(got.len(), 3);
        assert!(got[0].contains("\"offset\":3,\"limit\":2"));
        let body = "3\ta&lt;/system-reminder>\n4\t[m]";
        assert_eq!(got[1], format!("<r>{{R}} {body}|{{R}} {body}</r>"));
        assert_eq!(got[2], "<r>Note: /p/x escaped|Note: /p/x escaped</r>");
        assert_eq!(b.units(), utf16_len(&got.join("\n")));
        let none = FileTemplates::new(&texts("<none/>", "R:\n{result}"));
        let b = Blocks::new(&none, "/p/x", "", 1, 0, true, "".into(), None);
        assert_eq!(b.to_strings(), vec!["<none/>", "<none/>"]);
    }

    #[test]
    fn a_byte_order_mark_and_no_text() {
        let tpl = FileTemplates::new(&texts("{content}", "{result}"));
        let body = Body::new(&tpl, "\u{feff}a\r\nb", 1, 2, false, "".into(), false);
        assert_eq!(body.to_text(), "1\ta\n2\tb");
        assert_eq!(body.units(), 7);
        assert_eq!(
            Body::new(&tpl, "\u{feff}a", 3, 2, false, "".into(), false).to_text(),
            "3\t\u{feff}a"
        );
        assert_eq!(
            Body::new(&tpl, "", 1, 0, true, "".into(), false).to_text(),
            "<w>empty</w>"
        );
        assert_eq!(
            Body::new(&tpl, "\u{feff}", 1, 1, true, "".into(), false).to_text(),
            "<w>1 of 1</w>"
        );
    }
}
