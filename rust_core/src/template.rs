//! The daemon's templates (`render.Templates`, Python `str.format` strings) as the core renders
//! them: literal text and named placeholders, `{{` and `}}` for braces. The daemon checks every
//! template when it is configured (only the placeholders a field allows, no format specs or
//! conversions), so a template reaching the core is literal text and `{name}`s; values are
//! substituted once and never parsed again, as `str.format` does.

/// One part of a template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    Lit(String),
    Field(String),
}

/// A parsed template.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Template {
    pieces: Vec<Piece>,
}

impl Template {
    /// `template` as `str.format` reads it: `{{` and `}}` are braces, `{name}` a placeholder. (A
    /// lone `}`, or a `{` never closed, which `str.format` refuses and the daemon's check never
    /// lets through, is kept as text.)
    pub fn parse(template: &str) -> Self {
        let mut pieces = Vec::new();
        let mut lit = String::new();
        let mut rest = template;
        while let Some(i) = rest.find(['{', '}']) {
            lit.push_str(&rest[..i]);
            let brace = rest.as_bytes()[i];
            let after = &rest[i + 1..];
            if after.as_bytes().first() == Some(&brace) {
                lit.push(brace as char);
                rest = &after[1..];
            } else if brace == b'{' {
                match after.find('}') {
                    Some(end) => {
                        if !lit.is_empty() {
                            pieces.push(Piece::Lit(std::mem::take(&mut lit)));
                        }
                        pieces.push(Piece::Field(after[..end].to_owned()));
                        rest = &after[end + 1..];
                    }
                    None => {
                        lit.push('{');
                        rest = after;
                    }
                }
            } else {
                lit.push('}');
                rest = after;
            }
        }
        lit.push_str(rest);
        if !lit.is_empty() {
            pieces.push(Piece::Lit(lit));
        }
        Template { pieces }
    }

    pub fn pieces(&self) -> &[Piece] {
        &self.pieces
    }

    /// The template with each placeholder replaced by what `value` writes for its name (a name
    /// it does not know: nothing).
    pub fn render(&self, mut value: impl FnMut(&str, &mut String)) -> String {
        let mut out = String::new();
        self.render_into(&mut out, &mut value);
        out
    }

    pub fn render_into(&self, out: &mut String, value: &mut impl FnMut(&str, &mut String)) {
        for p in &self.pieces {
            match p {
                Piece::Lit(s) => out.push_str(s),
                Piece::Field(name) => value(name, out),
            }
        }
    }

    /// The template with `field` left open: the literal text around each of its occurrences
    /// (one more part than occurrences), the other placeholders rendered by `value`.
    pub fn split(&self, field: &str, mut value: impl FnMut(&str, &mut String)) -> Vec<String> {
        let mut parts = vec![String::new()];
        for p in &self.pieces {
            let last = parts.last_mut().expect("never empty");
            match p {
                Piece::Lit(s) => last.push_str(s),
                Piece::Field(name) if name == field => parts.push(String::new()),
                Piece::Field(name) => value(name, last),
            }
        }
        parts
    }
}

/// A number as a placeholder's value.
pub fn number(out: &mut String, n: impl std::fmt::Display) {
    use std::fmt::Write;
    let _ = write!(out, "{n}");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(t: &str, name: &str, v: &str) -> String {
        Template::parse(t).render(|n, out| {
            if n == name {
                out.push_str(v)
            }
        })
    }

    #[test]
    fn formats_like_str_format() {
        assert_eq!(fmt("a {x} b", "x", "1"), "a 1 b");
        assert_eq!(fmt("{{x}} {x}}}", "x", "{y}"), "{x} {y}}");
        assert_eq!(fmt("{x}{x}", "x", "ab"), "abab");
        assert_eq!(fmt("", "x", "1"), "");
        assert_eq!(fmt("no fields", "x", "1"), "no fields");
        assert_eq!(fmt("é{x}中", "x", "😀"), "é😀中");
    }

    #[test]
    fn splits_around_a_field() {
        let t = Template::parse("<r>{content}|{content}</r>{other}");
        let parts = t.split("content", |n, out| out.push_str(n));
        assert_eq!(parts, vec!["<r>", "|", "</r>other"]);
        assert_eq!(
            Template::parse("none").split("content", |_, _| {}),
            vec!["none"]
        );
    }
}
