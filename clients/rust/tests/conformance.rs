//! Runs every `tests/conformance/*.json` scenario (see tests/conformance/README.md) against a live
//! daemon started here: `<repo>/.venv/bin/python -m postcompact serve --socket <short /tmp path>`.
//!
//! Nothing is skipped: a missing daemon, an empty scenario directory, an op or a field this runner
//! does not understand, and any mismatch are failures.

mod common;

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use common::{nanos, repo_root, Daemon};

use postcompact_client::pb;
use postcompact_client::{code_name, join, parse_profile, Client, Error, ImportOptions, Session};
use serde_json::{json, Map, Value};

const STEP_TIMEOUT: Duration = Duration::from_secs(60);

type R<T> = Result<T, String>;

// ---------------------------------------------------------------------------------------------
// JSON helpers

fn subst(v: &Value, root: &str) -> Value {
    match v {
        Value::String(s) => Value::String(s.replace("${root}", root)),
        Value::Array(a) => Value::Array(a.iter().map(|x| subst(x, root)).collect()),
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, x)| (k.clone(), subst(x, root))).collect())
        }
        other => other.clone(),
    }
}

/// The fields of one JSON object, each taken at most once; leftovers are reported as errors so
/// nothing a scenario says is silently ignored.
struct Fields<'a> {
    what: String,
    obj: &'a Map<String, Value>,
    used: BTreeSet<&'static str>,
}

impl<'a> Fields<'a> {
    fn new(what: impl Into<String>, v: &'a Value) -> R<Self> {
        let what = what.into();
        let obj = v
            .as_object()
            .ok_or_else(|| format!("{what}: expected a JSON object, got {v}"))?;
        Ok(Fields {
            what,
            obj,
            used: BTreeSet::new(),
        })
    }

    fn get(&mut self, k: &'static str) -> Option<&'a Value> {
        self.used.insert(k);
        self.obj.get(k).filter(|v| !v.is_null())
    }

    fn str(&mut self, k: &'static str) -> R<Option<String>> {
        match self.get(k) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(format!("{}: `{k}` must be a string, got {v}", self.what)),
        }
    }

    fn req_str(&mut self, k: &'static str) -> R<String> {
        self.str(k)?
            .ok_or_else(|| format!("{}: `{k}` is required", self.what))
    }

    fn int(&mut self, k: &'static str) -> R<Option<i64>> {
        match self.get(k) {
            None => Ok(None),
            Some(v) => v
                .as_i64()
                .map(Some)
                .ok_or_else(|| format!("{}: `{k}` must be an integer, got {v}", self.what)),
        }
    }

    fn bool(&mut self, k: &'static str) -> R<Option<bool>> {
        match self.get(k) {
            None => Ok(None),
            Some(v) => v
                .as_bool()
                .map(Some)
                .ok_or_else(|| format!("{}: `{k}` must be a boolean, got {v}", self.what)),
        }
    }

    fn list(&mut self, k: &'static str) -> R<Option<&'a Vec<Value>>> {
        match self.get(k) {
            None => Ok(None),
            Some(Value::Array(a)) => Ok(Some(a)),
            Some(v) => Err(format!("{}: `{k}` must be a list, got {v}", self.what)),
        }
    }

    fn str_list(&mut self, k: &'static str) -> R<Option<Vec<String>>> {
        let what = self.what.clone();
        self.list(k)?
            .map(|a| {
                a.iter()
                    .map(|x| {
                        x.as_str()
                            .map(str::to_owned)
                            .ok_or_else(|| format!("{what}: `{k}` must hold strings, got {x}"))
                    })
                    .collect()
            })
            .transpose()
    }

    /// Fails on any key that was never asked for.
    fn done(self) -> R<()> {
        let unknown: Vec<&String> = self
            .obj
            .keys()
            .filter(|k| !self.used.contains(k.as_str()))
            .collect();
        if unknown.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "{}: the Rust runner does not understand {unknown:?}",
                self.what
            ))
        }
    }
}

/// An enum value by its name without the prefix (`"TRUNCATE_HEAD"` for
/// `OVERSIZE_POLICY_TRUNCATE_HEAD`), case-insensitive, `-` read as `_`.
fn enum_value(what: &str, prefix: &str, name: &str, from_str: fn(&str) -> Option<i32>) -> R<i32> {
    let n = name.trim().to_ascii_uppercase().replace('-', "_");
    from_str(&format!("{prefix}{n}"))
        .ok_or_else(|| format!("{what}: unknown value {name:?} (expected a {prefix}* name)"))
}

fn enum_name(full: &str, prefix: &str) -> String {
    full.strip_prefix(prefix).unwrap_or(full).to_owned()
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

// ---------------------------------------------------------------------------------------------
// Requests from JSON

fn parse_policy(v: &Value, what: &str) -> R<pb::RestorePolicy> {
    let mut f = Fields::new(format!("{what}.policy"), v)?;
    let mut p = pb::RestorePolicy {
        max_files: f
            .int("max_files")?
            .map(|n| i32::try_from(n).map_err(|_| format!("{what}: max_files out of range")))
            .transpose()?,
        file_token_budget: f.int("file_token_budget")?,
        max_tokens_per_file: f.int("max_tokens_per_file")?,
        max_tokens_per_skill: f.int("max_tokens_per_skill")?,
        skills_token_budget: f.int("skills_token_budget")?,
        skill_truncation_marker: f.str("skill_truncation_marker")?,
        file_truncation_marker: f.str("file_truncation_marker")?,
        encoding: f.str("encoding")?,
        max_file_size_bytes: f.int("max_file_size_bytes")?,
        malware_reminder: f.bool("malware_reminder")?,
        carry_read_state: f.bool("carry_read_state")?,
        restore_seen: f.bool("restore_seen")?,
        left_out_index: f.bool("left_out_index")?,
        ..Default::default()
    };
    if let Some(o) = f.str("oversize")? {
        p.oversize = enum_value(what, "OVERSIZE_POLICY_", &o, |s| {
            pb::OversizePolicy::from_str_name(s).map(|e| e as i32)
        })?;
    }
    if let Some(c) = f.str("counter")? {
        p.counter = enum_value(what, "TOKEN_COUNTER_", &c, |s| {
            pb::TokenCounter::from_str_name(s).map(|e| e as i32)
        })?;
    }
    if let Some(r) = f.str("ranking")? {
        p.ranking = enum_value(what, "FILE_RANKING_", &r, |s| {
            pb::FileRanking::from_str_name(s).map(|e| e as i32)
        })?;
    }
    for (key, slot) in [
        ("complement", &mut p.complement),
        ("match_budget", &mut p.match_budget),
    ] {
        if let Some(h) = f.str(key)? {
            *slot = enum_value(what, "HARNESS_RULE_", &h, |s| {
                pb::HarnessRule::from_str_name(s).map(|e| e as i32)
            })?;
        }
    }
    f.done()?;
    Ok(p)
}

fn parse_messages(list: &[Value], what: &str) -> R<Vec<pb::ConversationMessage>> {
    let mut out = Vec::new();
    for (i, m) in list.iter().enumerate() {
        let w = format!("{what}.preserved_messages[{i}]");
        let mut f = Fields::new(w.clone(), m)?;
        let role = f.req_str("role")?;
        let role = enum_value(&w, "ROLE_", &role, |s| {
            pb::Role::from_str_name(s).map(|e| e as i32)
        })?;
        let mut content = Vec::new();
        for (j, b) in f.list("content")?.into_iter().flatten().enumerate() {
            let wb = format!("{w}.content[{j}]");
            let mut fb = Fields::new(wb.clone(), b)?;
            let block = if let Some(t) = fb.str("text")? {
                pb::content_block::Block::Text(t.into_bytes())
            } else if let Some(tu) = fb.get("tool_use") {
                let mut ft = Fields::new(format!("{wb}.tool_use"), tu)?;
                let input = ft.get("input").cloned().unwrap_or_else(|| json!({}));
                let input_json = match ft.str("input_json")? {
                    Some(s) => s,
                    None => serde_json::to_string(&input).map_err(|e| e.to_string())?,
                };
                let b = pb::ToolUse {
                    id: ft.str("id")?.unwrap_or_default(),
                    name: ft.req_str("name")?,
                    input_json,
                };
                ft.done()?;
                pb::content_block::Block::ToolUse(b)
            } else if let Some(tr) = fb.get("tool_result") {
                let mut ft = Fields::new(format!("{wb}.tool_result"), tr)?;
                let b = pb::ToolResult {
                    tool_use_id: ft.str("tool_use_id")?.unwrap_or_default(),
                    content: ft.str("content")?.unwrap_or_default().into_bytes(),
                    is_error: ft.bool("is_error")?.unwrap_or(false),
                };
                ft.done()?;
                pb::content_block::Block::ToolResult(b)
            } else {
                return Err(format!(
                    "{wb}: a content block needs `text`, `tool_use` or `tool_result`"
                ));
            };
            fb.done()?;
            content.push(pb::ContentBlock { block: Some(block) });
        }
        f.done()?;
        out.push(pb::ConversationMessage { role, content });
    }
    Ok(out)
}

fn parse_task(v: &Value, what: &str) -> R<pb::Task> {
    let mut f = Fields::new(format!("{what}.task"), v)?;
    let mut t = pb::Task {
        task_id: f.req_str("task_id")?,
        task_type: f.str("task_type")?.unwrap_or_default(),
        description: f.str("description")?.unwrap_or_default(),
        progress_summary: f.str("progress_summary")?.unwrap_or_default(),
        error: f.str("error")?.unwrap_or_default(),
        retrieved: f.bool("retrieved")?.unwrap_or(false),
        output_file_path: f.str("output_file_path")?.unwrap_or_default(),
        agent_id: f.str("agent_id")?.unwrap_or_default(),
        command: f.str("command")?.unwrap_or_default(),
        monitor: f.bool("monitor")?.unwrap_or(false),
        ..Default::default()
    };
    if let Some(s) = f.str("status")? {
        t.status = enum_value(what, "TASK_STATUS_", &s, |s| {
            pb::TaskStatus::from_str_name(s).map(|e| e as i32)
        })?;
    }
    f.done()?;
    Ok(t)
}

// ---------------------------------------------------------------------------------------------
// Responses as JSON (field names as in the proto, enums by their short names, bytes as text)

fn attachment_json(a: &pb::Attachment) -> Value {
    use pb::attachment::Payload;
    let mut o = Map::new();
    o.insert(
        "kind".into(),
        enum_name(a.kind().as_str_name(), "ATTACHMENT_KIND_").into(),
    );
    o.insert(
        "placement".into(),
        enum_name(a.placement().as_str_name(), "PLACEMENT_").into(),
    );
    o.insert("blocks".into(), a.blocks.clone().into());
    // The attachment's text: its blocks joined by "\n".
    o.insert("rendered_text".into(), a.rendered_text().into());
    o.insert("tokens".into(), a.tokens.into());
    match &a.payload {
        Some(Payload::File(f)) => {
            o.insert("path".into(), f.path.clone().into());
            o.insert("display_path".into(), f.display_path.clone().into());
            o.insert("content".into(), lossy(&f.content).into());
            o.insert("file_content".into(), lossy(&f.content).into());
            o.insert("truncated".into(), f.truncated.into());
            o.insert("total_lines".into(), f.total_lines.into());
            o.insert("num_lines".into(), f.num_lines.into());
        }
        Some(Payload::FileReference(f)) => {
            o.insert("path".into(), f.path.clone().into());
            o.insert("display_path".into(), f.display_path.clone().into());
        }
        Some(Payload::PlanFileReference(p)) => {
            o.insert("plan_file_path".into(), p.plan_file_path.clone().into());
        }
        Some(Payload::PlanMode(p)) => {
            o.insert("plan_file_path".into(), p.plan_file_path.clone().into());
            o.insert("plan_exists".into(), p.plan_exists.into());
            o.insert("is_sub_agent".into(), p.is_sub_agent.into());
        }
        Some(Payload::TaskStatus(t)) => {
            o.insert("task_id".into(), t.task_id.clone().into());
            o.insert(
                "status".into(),
                enum_name(t.status().as_str_name(), "TASK_STATUS_").into(),
            );
        }
        _ => {}
    }
    Value::Object(o)
}

fn decision_json(d: &pb::Decision) -> Value {
    json!({
        "subject": enum_name(d.subject().as_str_name(), "SUBJECT_"),
        "name": d.name,
        "outcome": enum_name(d.outcome().as_str_name(), "OUTCOME_"),
        "tokens": d.tokens,
        "rank": d.rank,
        "detail": d.detail,
    })
}

fn compaction_json(c: &postcompact_client::Compaction) -> Value {
    // The join helper: what the client hands the harness, by placement.
    let injection = join(&c.attachments);
    json!({
        "attachments": c.attachments.iter().map(attachment_json).collect::<Vec<_>>(),
        "decisions": c.decisions.iter().map(decision_json).collect::<Vec<_>>(),
        "totals": c.totals.iter().map(|t| json!({
            "category": t.category, "attachments": t.attachments,
            "dropped": t.dropped, "tokens": t.tokens,
        })).collect::<Vec<_>>(),
        "rendered_text": c.rendered_text,
        "user_blocks": injection.user_blocks,
        "system_text": injection.system_text,
        "compaction": c.compaction,
    })
}

fn restored_items_json(items: &[pb::RestoredItem]) -> Value {
    items
        .iter()
        .map(|x| json!({"kind": x.kind, "path": x.path}))
        .collect()
}

fn import_json(r: &pb::ImportTranscriptResponse) -> Value {
    json!({
        "session_id": r.session_id,
        "records": r.records,
        "events": r.events,
        "boundaries": r.boundaries.iter().map(|b| json!({
            "uuid": b.uuid, "line": b.line, "trigger": b.trigger,
            "timestamp_ms": b.timestamp_ms, "preserved_messages": b.preserved_messages,
            "has_recorded_restore": b.has_recorded_restore,
            "recorded": restored_items_json(&b.recorded),
            "restored": restored_items_json(&b.restored),
        })).collect::<Vec<_>>(),
        // The expectation is the count; the texts are shown when it differs.
        "warnings": r.warnings.len(),
        "warning_texts": r.warnings,
    })
}

// ---------------------------------------------------------------------------------------------
// Expectations

struct Ctx {
    root: PathBuf,
    root_s: String,
    /// The sessions `import_transcript` made, closed with the scenario's own.
    imported: RefCell<Vec<String>>,
}

impl Ctx {
    /// The expectation path rule: `${root}` already substituted; relative paths join the root.
    fn exp_path(&self, p: &str) -> String {
        if Path::new(p).is_absolute() {
            p.to_owned()
        } else {
            self.root.join(p).to_string_lossy().into_owned()
        }
    }

    fn disk_path(&self, p: &str) -> PathBuf {
        let p = Path::new(p);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.root.join(p)
        }
    }

    fn is_path_key(k: &str) -> bool {
        k == "path" || k.ends_with("_path")
    }

    fn check_attachments(&self, exp: &Value, got: &[Value], what: &str) -> R<()> {
        let exp = exp
            .as_array()
            .ok_or_else(|| format!("{what}: `attachments` must be a list"))?;
        let kinds = |v: &[Value]| -> Vec<String> {
            v.iter()
                .map(|a| {
                    a.get("kind")
                        .and_then(Value::as_str)
                        .unwrap_or("?")
                        .to_owned()
                })
                .collect()
        };
        if exp.len() != got.len() {
            return Err(format!(
                "{what}: expected {} attachments {:?}, got {} {:?}",
                exp.len(),
                exp.iter()
                    .map(|a| a.get("kind").cloned().unwrap_or(Value::Null))
                    .collect::<Vec<_>>(),
                got.len(),
                kinds(got)
            ));
        }
        for (i, (e, g)) in exp.iter().zip(got).enumerate() {
            let w = format!("{what}: attachment [{i}]");
            let mut f = Fields::new(w.clone(), e)?;
            let gk = g["kind"].as_str().unwrap_or_default();
            let ek = f.req_str("kind")?;
            let ek = ek.strip_prefix("ATTACHMENT_KIND_").unwrap_or(&ek);
            if !ek.eq_ignore_ascii_case(gk) {
                return Err(format!(
                    "{w}: kind {ek}, got {gk} (all kinds: {:?})",
                    kinds(got)
                ));
            }
            if let Some(subs) = f.str_list("rendered_contains")? {
                let text = g["rendered_text"].as_str().unwrap_or_default();
                for s in subs {
                    if !text.contains(&s) {
                        return Err(format!(
                            "{w} ({gk}): rendered_text does not contain {s:?}\n--- rendered_text ---\n{text}"
                        ));
                    }
                }
            }
            let keys: Vec<String> = e
                .as_object()
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default();
            for k in keys {
                if k == "kind" || k == "rendered_contains" {
                    continue;
                }
                let Some(gv) = g.get(&k) else {
                    return Err(format!(
                        "{w} ({gk}): the Rust runner cannot check `{k}` on this kind"
                    ));
                };
                let ev = &e[&k];
                self.compare(&format!("{w} ({gk}) {k}"), &k, ev, gv)?;
            }
        }
        Ok(())
    }

    /// `boundaries`: exactly this many, in order; `recorded` and `restored` are lists of
    /// `{kind, path}` compared exactly and in order (paths as in the transcript: no path rule),
    /// any other key the response field of that name.
    fn check_boundaries(&self, exp: &Value, got: &[Value], what: &str) -> R<()> {
        let exp = exp
            .as_array()
            .ok_or_else(|| format!("{what}: `boundaries` must be a list"))?;
        if exp.len() != got.len() {
            return Err(format!(
                "{what}: expected {} boundaries, got {}: {}",
                exp.len(),
                got.len(),
                Value::Array(got.to_vec())
            ));
        }
        for (i, (e, g)) in exp.iter().zip(got).enumerate() {
            let w = format!("{what}: boundary [{i}]");
            let eo = e
                .as_object()
                .ok_or_else(|| format!("{w}: expected a JSON object, got {e}"))?;
            for (k, ev) in eo {
                let gv = g
                    .get(k)
                    .ok_or_else(|| format!("{w}: the Rust runner does not understand `{k}`"))?;
                if k == "recorded" || k == "restored" {
                    let items = ev
                        .as_array()
                        .ok_or_else(|| format!("{w}: `{k}` must be a list"))?;
                    for (j, item) in items.iter().enumerate() {
                        let mut fi = Fields::new(format!("{w} {k}[{j}]"), item)?;
                        fi.str("kind")?;
                        fi.str("path")?;
                        fi.done()?;
                    }
                    if ev != gv {
                        return Err(format!("{w}: `{k}`: expected {ev}, got {gv}"));
                    }
                } else if ev != gv {
                    return Err(format!("{w}: `{k}`: expected {ev}, got {gv}"));
                }
            }
        }
        Ok(())
    }

    fn check_decisions(&self, exp: &Value, exact: bool, got: &[Value], what: &str) -> R<()> {
        let exp = exp
            .as_array()
            .ok_or_else(|| format!("{what}: `decisions` must be a list"))?;
        let show = || {
            got.iter()
                .map(|d| format!("{} {} {}", d["subject"], d["name"], d["outcome"]))
                .collect::<Vec<_>>()
                .join("\n  ")
        };
        let mut matched = vec![false; got.len()];
        for (i, e) in exp.iter().enumerate() {
            let o = e
                .as_object()
                .ok_or_else(|| format!("{what}: decisions[{i}] must be an object"))?;
            for k in o.keys() {
                if !["subject", "name", "outcome", "tokens", "rank", "detail"].contains(&k.as_str())
                {
                    return Err(format!(
                        "{what}: decisions[{i}]: the Rust runner does not understand `{k}`"
                    ));
                }
            }
            let subject = o
                .get("subject")
                .and_then(Value::as_str)
                .map(|s| s.strip_prefix("SUBJECT_").unwrap_or(s).to_ascii_uppercase());
            let want_name = o.get("name").and_then(Value::as_str).map(|n| {
                if subject.as_deref() == Some("FILE") {
                    self.exp_path(n)
                } else {
                    n.to_owned()
                }
            });
            let found = got.iter().enumerate().find(|(j, g)| {
                !matched[*j]
                    && subject.as_deref().is_none_or(|s| g["subject"] == s)
                    && want_name.as_deref().is_none_or(|n| g["name"] == n)
                    && o.get("outcome").and_then(Value::as_str).is_none_or(|x| {
                        g["outcome"] == x.strip_prefix("OUTCOME_").unwrap_or(x).to_ascii_uppercase()
                    })
                    && ["tokens", "rank", "detail"]
                        .iter()
                        .all(|k| o.get(*k).is_none_or(|v| &g[*k] == v))
            });
            match found {
                Some((j, _)) => matched[j] = true,
                None => {
                    return Err(format!(
                    "{what}: no decision matches {e} (name as compared: {want_name:?}); got:\n  {}",
                    show()
                ))
                }
            }
        }
        if exact && exp.len() != got.len() {
            return Err(format!(
                "{what}: decisions_exact: expected {} decisions, got {}:\n  {}",
                exp.len(),
                got.len(),
                show()
            ));
        }
        Ok(())
    }

    fn compare(&self, what: &str, key: &str, exp: &Value, got: &Value) -> R<()> {
        let exp = if Self::is_path_key(key) {
            match exp {
                Value::String(s) if !s.is_empty() => Value::String(self.exp_path(s)),
                other => other.clone(),
            }
        } else {
            exp.clone()
        };
        if key.ends_with("_paths") {
            let set = |v: &Value| -> Option<BTreeSet<String>> {
                v.as_array().map(|a| {
                    a.iter()
                        .map(|x| x.as_str().map(|s| self.exp_path(s)).unwrap_or_default())
                        .collect()
                })
            };
            let (e, g) = (set(&exp), set(got));
            if e.is_none() || e != g {
                return Err(format!("{what}: expected (as a set) {exp}, got {got}"));
            }
            return Ok(());
        }
        if exp == *got {
            Ok(())
        } else {
            match (&exp, got) {
                (Value::String(e), Value::String(g)) => Err(format!(
                    "{what}: text differs\n--- expected ---\n{e}\n--- got ---\n{g}\n---"
                )),
                _ => Err(format!("{what}: expected {exp}, got {got}")),
            }
        }
    }

    /// Checks `expect` against a response rendered as JSON.
    fn check(&self, expect: Option<&Value>, got: &Value, what: &str) -> R<()> {
        let Some(expect) = expect else {
            return Ok(());
        };
        let eo = expect
            .as_object()
            .ok_or_else(|| format!("{what}: `expect` must be an object"))?;
        let exact = eo
            .get("decisions_exact")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        for (k, ev) in eo {
            let gv = got.get(k);
            match (k.as_str(), gv) {
                ("decisions_exact", _) => {
                    if eo.get("decisions").is_none() {
                        return Err(format!("{what}: decisions_exact without decisions"));
                    }
                }
                ("attachments", Some(Value::Array(ga))) => self.check_attachments(ev, ga, what)?,
                ("boundaries", Some(Value::Array(gb))) => self.check_boundaries(ev, gb, what)?,
                ("warnings", Some(gv)) => self
                    .compare(&format!("{what}: `warnings` (count)"), k, ev, gv)
                    .map_err(|e| format!("{e}\nwarnings: {}", got["warning_texts"]))?,
                ("decisions", Some(Value::Array(gd))) => {
                    self.check_decisions(ev, exact, gd, what)?
                }
                (_, Some(gv)) => self.compare(&format!("{what}: `{k}`"), k, ev, gv)?,
                (_, None) => {
                    return Err(format!(
                        "{what}: the Rust runner cannot check `{k}` on this op (response has {:?})",
                        got.as_object()
                            .map(|o| o.keys().cloned().collect::<Vec<_>>())
                            .unwrap_or_default()
                    ))
                }
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Steps

/// Runs one op: `Ok(Some(json))` is the response to check, `Ok(None)` an op without a response;
/// `Err(Ok(error))` a failed RPC, `Err(Err(message))` a runner or scenario problem.
type OpResult = Result<Option<Value>, Result<Error, String>>;

fn rpc<T>(r: Result<T, Error>) -> Result<T, Result<Error, String>> {
    r.map_err(Ok)
}

fn bad<T>(r: R<T>) -> Result<T, Result<Error, String>> {
    r.map_err(Err)
}

async fn run_op(ctx: &Ctx, main: &Session, op: &str, f: &mut Fields<'_>, what: &str) -> OpResult {
    let agent = bad(f.str("agent"))?.unwrap_or_default();
    let s = main.agent(agent.clone());
    let client = main.client();
    match op {
        "write_file" => {
            let path = ctx.disk_path(&bad(f.req_str("path"))?);
            let content = bad(f.req_str("content"))?;
            if let Some(parent) = path.parent() {
                bad(fs::create_dir_all(parent).map_err(|e| e.to_string()))?;
            }
            bad(fs::write(&path, content).map_err(|e| format!("{what}: {e}")))?;
            if let Some(ms) = bad(f.int("mtime_ms"))? {
                let t = UNIX_EPOCH + Duration::from_millis(ms as u64);
                let file = bad(fs::File::options()
                    .write(true)
                    .open(&path)
                    .map_err(|e| e.to_string()))?;
                bad(file.set_modified(t).map_err(|e| e.to_string()))?;
            }
            Ok(None)
        }
        "delete_file" => {
            let path = ctx.disk_path(&bad(f.req_str("path"))?);
            bad(fs::remove_file(&path).map_err(|e| format!("{what}: {}: {e}", path.display())))?;
            Ok(None)
        }
        "start_agent" => {
            if agent.is_empty() {
                return Err(Err(format!("{what}: start_agent needs `agent`")));
            }
            let parent = bad(f.str("parent"))?.unwrap_or_default();
            let mode = match bad(f.str("mode"))? {
                Some(m) => bad(enum_value(what, "AGENT_MODE_", &m, |s| {
                    pb::AgentMode::from_str_name(s).map(|e| e as i32)
                }))?,
                None => pb::AgentMode::Unspecified as i32,
            };
            let r = rpc(client
                .start_agent(pb::StartAgentRequest {
                    session_id: main.id().to_owned(),
                    agent_id: agent,
                    parent_agent_id: parent,
                    mode,
                })
                .await)?;
            Ok(Some(
                json!({"agent_id": r.agent_id, "cached_entries": r.cached_entries}),
            ))
        }
        "attach" => {
            let joined = rpc(client.attach_session(main.id().to_owned()).await)?;
            Ok(Some(json!({"resumed": joined.resumed()})))
        }
        "end_agent" => {
            let r = rpc(s.end_agent().await)?;
            Ok(Some(
                json!({"cached_entries": r.cached_entries, "agents": r.agents}),
            ))
        }
        "merge_file_state" => {
            let r = rpc(client
                .merge_file_state(pb::MergeFileStateRequest {
                    session_id: main.id().to_owned(),
                    from_agent_id: bad(f.str("from"))?.unwrap_or_default(),
                    into_agent_id: bad(f.str("into"))?.unwrap_or_default(),
                })
                .await)?;
            Ok(Some(json!({"merged": r.merged, "kept": r.kept})))
        }
        "read_file" => {
            let r = rpc(s
                .read_file_with(pb::ReadFileRequest {
                    path: bad(f.req_str("path"))?,
                    offset: bad(f.int("offset"))?,
                    limit: bad(f.int("limit"))?,
                    ..Default::default()
                })
                .await)?;
            Ok(Some(json!({
                "path": r.path, "unchanged": r.unchanged, "text": lossy(&r.text),
                "content": lossy(&r.content), "timestamp_ms": r.timestamp_ms,
                "start_line": r.start_line, "num_lines": r.num_lines,
                "total_lines": r.total_lines, "tokens": r.tokens,
            })))
        }
        "record_read" | "record_write" => {
            let path = bad(f.req_str("path"))?;
            let content = match bad(f.str("content"))? {
                Some(c) => c.into_bytes(),
                None => bad(fs::read(ctx.disk_path(&path))
                    .map_err(|e| format!("{what}: reading {path} for its content: {e}")))?,
            };
            let timestamp_ms = bad(f.int("timestamp_ms"))?.unwrap_or(0);
            let p = if op == "record_read" {
                rpc(s
                    .record_read_with(pb::RecordReadRequest {
                        path,
                        content,
                        timestamp_ms,
                        offset: bad(f.int("offset"))?,
                        limit: bad(f.int("limit"))?,
                        partial_view: bad(f.bool("partial_view"))?.unwrap_or(false),
                        nested_memory: bad(f.bool("nested_memory"))?.unwrap_or(false),
                        ..Default::default()
                    })
                    .await)?
            } else if let Some(pairs) = bad(f.list("changed_lines"))? {
                let ranges = bad(pairs
                    .iter()
                    .map(|p| match p.as_array().map(|a| (a.len(), a)) {
                        Some((2, a)) => match (a[0].as_i64(), a[1].as_i64()) {
                            (Some(first), Some(last)) => Ok(pb::LineRange { first, last }),
                            _ => Err(format!("{what}: changed_lines pairs are integers, got {p}")),
                        },
                        _ => Err(format!(
                            "{what}: changed_lines holds [first, last] pairs, got {p}"
                        )),
                    })
                    .collect::<R<Vec<_>>>())?;
                match bad(f.int("if_entry_timestamp_ms"))? {
                    None => rpc(s
                        .record_write_changed(
                            path,
                            content,
                            timestamp_ms,
                            ranges.iter().map(|r| (r.first, r.last)),
                        )
                        .await)?,
                    entry => rpc(s
                        .record_write_with(pb::RecordWriteRequest {
                            path,
                            content,
                            timestamp_ms,
                            if_entry_timestamp_ms: entry,
                            changed_lines: Some(pb::ChangedLines { ranges }),
                            ..Default::default()
                        })
                        .await)?,
                }
            } else if let Some(entry) = bad(f.int("if_entry_timestamp_ms"))? {
                rpc(s.record_write_if(path, content, timestamp_ms, entry).await)?
            } else {
                rpc(s.record_write(path, content, timestamp_ms).await)?
            };
            Ok(Some(json!({ "path": p })))
        }
        "check_write" => {
            let r = rpc(s.check_write(bad(f.req_str("path"))?).await)?;
            Ok(Some(json!({
                "result": enum_name(r.result().as_str_name(), "WRITE_CHECK_"),
                "message": r.message, "error_code": r.error_code, "path": r.path,
                "entry_timestamp_ms": r.entry_timestamp_ms,
            })))
        }
        "check_stale" => {
            let r = rpc(s
                .check_stale(
                    &bad(f.str("command"))?.unwrap_or_default(),
                    bad(f.int("started_at_ms"))?.unwrap_or(0),
                )
                .await)?;
            Ok(Some(json!({"stale_paths": r.stale_paths, "hint": r.hint})))
        }
        "record_skill" => {
            let n = rpc(s
                .record_skill(
                    &bad(f.req_str("name"))?,
                    bad(f.str("skill_path"))?.unwrap_or_default(),
                    bad(f.str("content"))?.unwrap_or_default(),
                    bad(f.int("invoked_at_ms"))?.unwrap_or(0),
                )
                .await)?;
            Ok(Some(json!({ "skills": n })))
        }
        "set_plan" => {
            let p = rpc(s
                .set_plan(bad(f.str("plan_path"))?.unwrap_or_default())
                .await)?;
            Ok(Some(json!({ "plan_file_path": p })))
        }
        "set_mode" => {
            let m = bad(f.req_str("mode"))?;
            let mode = bad(enum_value(what, "PERMISSION_MODE_", &m, |s| {
                pb::PermissionMode::from_str_name(s).map(|e| e as i32)
            }))?;
            let mode = pb::PermissionMode::try_from(mode).unwrap_or_default();
            rpc(s.set_mode(mode).await)?;
            Ok(Some(json!({})))
        }
        "upsert_task" => {
            let t = f
                .get("task")
                .ok_or_else(|| Err(format!("{what}: upsert_task needs `task`")))?;
            let task = bad(parse_task(t, what))?;
            rpc(s.upsert_task(task).await)?;
            Ok(Some(json!({})))
        }
        "set_catalog" => {
            let mut req = pb::SetCatalogRequest::default();
            if let Some(names) = bad(f.str_list("deferred_tools"))? {
                req.deferred_tools = Some(pb::DeferredTools { names });
            }
            let note = bad(f.bool("show_concurrency_note"))?;
            let types = bad(f.list("agent_types"))?;
            if types.is_some() || note.is_some() {
                let mut agent_types = Vec::new();
                for (i, t) in types.into_iter().flatten().enumerate() {
                    let mut ft = bad(Fields::new(format!("{what}.agent_types[{i}]"), t))?;
                    agent_types.push(pb::AgentType {
                        agent_type: bad(ft.req_str("agent_type"))?,
                        when_to_use: bad(ft.str("when_to_use"))?.unwrap_or_default(),
                        tools: bad(ft.str_list("tools"))?.unwrap_or_default(),
                    });
                    bad(ft.done())?;
                }
                req.agent_types = Some(pb::AgentTypes {
                    agent_types,
                    show_concurrency_note: note.unwrap_or(false),
                });
            }
            if let Some(servers) = bad(f.list("mcp_servers"))? {
                let mut out = Vec::new();
                for (i, m) in servers.iter().enumerate() {
                    let mut fm = bad(Fields::new(format!("{what}.mcp_servers[{i}]"), m))?;
                    out.push(pb::McpServer {
                        name: bad(fm.req_str("name"))?,
                        instructions: bad(fm.str("instructions"))?.unwrap_or_default(),
                    });
                    bad(fm.done())?;
                }
                req.mcp_servers = Some(pb::McpServers { servers: out });
            }
            if let Some(skills) = bad(f.list("skill_listing"))? {
                let mut out = Vec::new();
                for (i, m) in skills.iter().enumerate() {
                    let mut fm = bad(Fields::new(format!("{what}.skill_listing[{i}]"), m))?;
                    out.push(pb::SkillListingEntry {
                        name: bad(fm.req_str("name"))?,
                        description: bad(fm.str("description"))?.unwrap_or_default(),
                    });
                    bad(fm.done())?;
                }
                req.skill_listing = Some(pb::SkillListing { skills: out });
            }
            let atts = rpc(s.set_catalog(req).await)?;
            Ok(Some(json!({
                "attachments": atts.iter().map(attachment_json).collect::<Vec<_>>()
            })))
        }
        "compact" | "preview_compact" => {
            let kind = match bad(f.str("kind"))? {
                Some(k) => bad(enum_value(what, "COMPACT_KIND_", &k, |s| {
                    pb::CompactKind::from_str_name(s).map(|e| e as i32)
                }))?,
                None => pb::CompactKind::Unspecified as i32,
            };
            let preserved_messages = match bad(f.list("preserved_messages"))? {
                Some(l) => bad(parse_messages(l, what))?,
                None => Vec::new(),
            };
            let policy = match f.get("policy") {
                Some(p) => Some(bad(parse_policy(p, what))?),
                None => None,
            };
            let additional_context = bad(f.str_list("additional_context"))?.unwrap_or_default();
            let skip_hooks = bad(f.bool("skip_hooks"))?.unwrap_or(false);
            let include_content = bad(f.bool("include_content"))?.unwrap_or(false);
            let c = if op == "compact" {
                rpc(s
                    .compact_with(pb::CompactRequest {
                        kind,
                        preserved_messages,
                        policy,
                        additional_context,
                        skip_hooks,
                        include_content,
                        ..Default::default()
                    })
                    .await)?
            } else {
                rpc(s
                    .preview_compact_with(pb::PreviewCompactRequest {
                        kind,
                        preserved_messages,
                        policy,
                        additional_context,
                        skip_hooks,
                        include_content,
                        ..Default::default()
                    })
                    .await)?
            };
            Ok(Some(compaction_json(&c)))
        }
        "import_transcript" => {
            // One JSON record a line (`${root}` already substituted), into
            // "<the scenario's session id>-<session_id>", with cwd = the project directory.
            let records = bad(f.list("transcript"))?
                .ok_or_else(|| Err(format!("{what}: import_transcript needs `transcript`")))?;
            let mut data = Vec::new();
            for r in records {
                bad(serde_json::to_writer(&mut data, r).map_err(|e| e.to_string()))?;
                data.push(b'\n');
            }
            let suffix = bad(f.req_str("session_id"))?;
            let session_id = format!("{}-{suffix}", main.id());
            ctx.imported.borrow_mut().push(session_id.clone());
            let r = rpc(client
                .import_transcript(data, ImportOptions::new(&ctx.root).session_id(session_id))
                .await)?;
            Ok(Some(import_json(&r)))
        }
        "estimate_tokens" => {
            let r = rpc(client
                .estimate_tokens(pb::EstimateTokensRequest {
                    text: bad(f.req_str("text"))?.into_bytes(),
                    ext: bad(f.str("ext"))?.unwrap_or_default(),
                })
                .await)?;
            Ok(Some(json!({ "tokens": r.tokens })))
        }
        "count_tokens" => {
            let r = rpc(client
                .count_tokens(pb::CountTokensRequest {
                    text: bad(f.req_str("text"))?.into_bytes(),
                    encoding: bad(f.str("encoding"))?.unwrap_or_default(),
                })
                .await)?;
            Ok(Some(json!({ "tokens": r.tokens })))
        }
        "truncate_tokens" => {
            let counter = match bad(f.str("counter"))? {
                Some(c) => bad(enum_value(what, "TOKEN_COUNTER_", &c, |s| {
                    pb::TokenCounter::from_str_name(s).map(|e| e as i32)
                }))?,
                None => pb::TokenCounter::Unspecified as i32,
            };
            let r = rpc(client
                .truncate_tokens(pb::TruncateTokensRequest {
                    text: bad(f.req_str("text"))?.into_bytes(),
                    max_tokens: bad(f.int("max_tokens"))?.unwrap_or(0),
                    marker: bad(f.str("marker"))?.unwrap_or_default(),
                    counter,
                    encoding: bad(f.str("encoding"))?.unwrap_or_default(),
                })
                .await)?;
            Ok(Some(json!({
                "text": lossy(&r.text), "truncated": r.truncated, "tokens": r.tokens
            })))
        }
        other => Err(Err(format!(
            "{what}: the Rust runner does not know the op {other:?}"
        ))),
    }
}

async fn run_step(ctx: &Ctx, session: &Session, i: usize, step: &Value) -> R<()> {
    let step = subst(step, &ctx.root_s);
    let op = step
        .get("op")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("step {i}: no `op`"))?
        .to_owned();
    let what = format!("step {i} ({op})");
    let mut f = Fields::new(what.clone(), &step)?;
    f.get("op");
    let expect = f.get("expect");
    let expect_error = f.get("expect_error");
    f.get("comment");
    f.get("description");
    let outcome = tokio::time::timeout(STEP_TIMEOUT, run_op(ctx, session, &op, &mut f, &what))
        .await
        .map_err(|_| format!("{what}: no answer within {STEP_TIMEOUT:?}"))?;
    // Every key of the step must have been understood.
    f.done()?;
    match (outcome, expect_error) {
        (Err(Err(msg)), _) => Err(msg),
        (Ok(_), Some(ee)) => Err(format!(
            "{what}: expected the error {ee}, but the call succeeded"
        )),
        (Err(Ok(err)), Some(ee)) => {
            let mut fe = Fields::new(format!("{what}.expect_error"), ee)?;
            let code = fe.str("code")?;
            let reason = fe.str("reason")?;
            fe.get("message_contains");
            let msg_contains = ee.get("message_contains").and_then(Value::as_str);
            fe.done()?;
            let got_code = code_name(err.code());
            if let Some(c) = code {
                if !c.eq_ignore_ascii_case(got_code) {
                    return Err(format!("{what}: expected code {c}, got {err}"));
                }
            }
            if let Some(r) = reason {
                if err.reason() != Some(r.as_str()) {
                    return Err(format!(
                        "{what}: expected reason {r}, got {:?} ({err})",
                        err.reason()
                    ));
                }
            }
            if let Some(m) = msg_contains {
                if !err.to_string().contains(m) {
                    return Err(format!("{what}: the error message lacks {m:?}: {err}"));
                }
            }
            Ok(())
        }
        (Err(Ok(err)), None) => Err(format!("{what}: the call failed: {err}")),
        (Ok(None), None) => {
            if expect.is_some() {
                Err(format!(
                    "{what}: this op has no response to check `expect` against"
                ))
            } else {
                Ok(())
            }
        }
        (Ok(Some(got)), None) => ctx.check(expect, &got, &what),
    }
}

async fn run_scenario(client: &Client, work: &Path, file: &Path) -> R<()> {
    let text = fs::read_to_string(file).map_err(|e| format!("cannot read: {e}"))?;
    let scenario: Value = serde_json::from_str(&text).map_err(|e| format!("bad JSON: {e}"))?;
    let mut f = Fields::new("scenario", &scenario)?;
    let name = f.req_str("name")?;
    f.get("description");
    f.get("comment");
    f.get("design_ref");
    f.get("tags");

    // A fresh project directory (canonical, so it matches the daemon's normalised paths).
    let slug: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(40)
        .collect();
    let root = work.join(format!("p-{slug}-{}", nanos() % 1_000_000_000));
    fs::create_dir_all(&root).map_err(|e| e.to_string())?;
    let root = root.canonicalize().map_err(|e| e.to_string())?;
    let root_s = root.to_string_lossy().into_owned();
    let ctx = Ctx {
        root: root.clone(),
        root_s: root_s.clone(),
        imported: RefCell::new(Vec::new()),
    };

    if let Some(files) = f.get("files") {
        let files = files
            .as_object()
            .ok_or("`files` must be an object of path → content")?;
        for (p, c) in files {
            let c = c
                .as_str()
                .ok_or_else(|| format!("files[{p}] must be a string"))?
                .replace("${root}", &root_s);
            let path = ctx.disk_path(&p.replace("${root}", &root_s));
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent).map_err(|e| e.to_string())?;
            }
            fs::write(&path, c).map_err(|e| format!("writing {}: {e}", path.display()))?;
        }
    }

    let mut req = pb::OpenSessionRequest {
        session_id: format!("rs-{slug}-{}-{}", std::process::id(), nanos()),
        cwd: root_s.clone(),
        ..Default::default()
    };
    if let Some(sv) = f.get("session") {
        let sv = subst(sv, &root_s);
        let mut fs_ = Fields::new("session", &sv)?;
        if let Some(p) = fs_.get("policy") {
            req.policy = Some(parse_policy(p, "session")?);
        }
        let names = fs_.str_list("memory_file_names")?;
        let paths = fs_.str_list("memory_paths")?;
        if names.is_some() || paths.is_some() {
            req.memory = Some(pb::MemoryFiles {
                file_names: names.unwrap_or_default(),
                paths: paths.unwrap_or_default(),
            });
        }
        if let Some(roots) = fs_.str_list("roots")? {
            req.roots = roots.iter().map(|r| ctx.exp_path(r)).collect();
        }
        if let Some(p) = fs_.str("profile")? {
            // The config/CLI names ("default", "claude-code", "claude-code-2.1.88").
            req.profile = parse_profile(&p).ok_or_else(|| {
                format!(
                    "session: unknown profile {p:?} (expected \"default\", \"claude-code\" or \
                     \"claude-code-2.1.88\")"
                )
            })? as i32;
        }
        if let Some(p) = fs_.str("plans_directory")? {
            req.plans_directory = ctx.exp_path(&p);
        }
        if let Some(h) = fs_.str("home")? {
            req.home = ctx.exp_path(&h);
        }
        fs_.done()?;
    }
    let steps = f.list("steps")?.cloned().unwrap_or_default();
    f.done()?;
    if steps.is_empty() {
        return Err("the scenario has no steps".into());
    }

    let session = client
        .open_session_with(req)
        .await
        .map_err(|e| format!("OpenSession failed: {e}"))?;
    let mut result = Ok(());
    for (i, step) in steps.iter().enumerate() {
        if let Err(e) = run_step(&ctx, &session, i, step).await {
            result = Err(e);
            break;
        }
    }
    for id in ctx.imported.take() {
        let _ = client.session(id).close().await;
    }
    let _ = session.close().await;
    let _ = fs::remove_dir_all(&root);
    result
}

#[tokio::test]
async fn conformance_scenarios() {
    let repo = repo_root();
    let dir = repo.join("tests/conformance");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "conformance: no scenarios in {}",
        dir.display()
    );

    let mut daemon = Daemon::start("conf", &[]);
    let client = daemon.wait_healthy().await;
    let work = daemon.dir.join("w");
    fs::create_dir_all(&work).expect("work dir");

    let mut failures = Vec::new();
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        match run_scenario(&client, &work, file).await {
            Ok(()) => println!("conformance: ok     {name}"),
            Err(e) => {
                println!(
                    "conformance: FAILED {name}: {}",
                    e.lines().next().unwrap_or("")
                );
                failures.push(format!("{name}: {e}"));
            }
        }
    }
    let how = daemon.stop();
    println!("conformance: daemon {how}");
    println!(
        "conformance: {} of {} scenarios passed",
        files.len() - failures.len(),
        files.len()
    );
    if !failures.is_empty() {
        panic!(
            "{} of {} conformance scenarios failed:\n\n{}\n\n--- daemon output (tail) ---\n{}",
            failures.len(),
            files.len(),
            failures.join("\n\n"),
            daemon.log_tail()
        );
    }
}

/// The runner itself must not pass what it should fail: each of these broken scenarios has to be
/// reported, with a message naming the problem.
#[tokio::test]
async fn runner_reports_every_kind_of_mismatch() {
    let cases: &[(&str, &str)] = &[
        (
            "text differs",
            r#"{"name": "x", "files": {"a.ts": "a"}, "steps": [
                {"op": "read_file", "path": "a.ts", "expect": {"text": "1\tb"}}]}"#,
        ),
        (
            "expected 2 attachments",
            r#"{"name": "x", "files": {"a.ts": "a"}, "steps": [
                {"op": "record_read", "path": "a.ts", "timestamp_ms": 1, "offset": 1},
                {"op": "compact", "expect": {"attachments": [{"kind": "FILE"}, {"kind": "FILE"}]}}]}"#,
        ),
        (
            "kind COMPACT_FILE_REFERENCE, got FILE",
            r#"{"name": "x", "files": {"a.ts": "a"}, "steps": [
                {"op": "record_read", "path": "a.ts", "timestamp_ms": 1, "offset": 1},
                {"op": "compact", "expect": {"attachments": [{"kind": "COMPACT_FILE_REFERENCE"}]}}]}"#,
        ),
        (
            "no decision matches",
            r#"{"name": "x", "files": {"a.ts": "a"}, "steps": [
                {"op": "record_read", "path": "a.ts", "timestamp_ms": 1, "offset": 1},
                {"op": "compact", "expect": {"attachments": [{"kind": "FILE", "path": "a.ts"}],
                 "decisions": [{"subject": "FILE", "name": "a.ts", "outcome": "DROPPED_BY_RANK"}]}}]}"#,
        ),
        (
            "does not know the op",
            r#"{"name": "x", "steps": [{"op": "frobnicate"}]}"#,
        ),
        (
            "does not understand",
            r#"{"name": "x", "files": {"a.ts": "a"}, "steps": [
                {"op": "read_file", "path": "a.ts", "frobnicate": true}]}"#,
        ),
        (
            "but the call succeeded",
            r#"{"name": "x", "files": {"a.ts": "a"}, "steps": [
                {"op": "read_file", "path": "a.ts", "expect_error": {"code": "NOT_FOUND"}}]}"#,
        ),
        (
            "expected code INVALID_ARGUMENT",
            r#"{"name": "x", "steps": [
                {"op": "read_file", "path": "missing.ts", "expect_error": {"code": "INVALID_ARGUMENT"}}]}"#,
        ),
        (
            "expected reason NO_SUCH_REASON",
            r#"{"name": "x", "steps": [
                {"op": "read_file", "path": "missing.ts",
                 "expect_error": {"code": "NOT_FOUND", "reason": "NO_SUCH_REASON"}}]}"#,
        ),
        (
            "the call failed",
            r#"{"name": "x", "steps": [{"op": "read_file", "path": "missing.ts"}]}"#,
        ),
        (
            "cannot check `nonsense`",
            r#"{"name": "x", "steps": [
                {"op": "estimate_tokens", "text": "abcd", "expect": {"nonsense": 1}}]}"#,
        ),
        ("no steps", r#"{"name": "x", "steps": []}"#),
        (
            "`user_blocks`",
            r#"{"name": "x", "files": {"a.ts": "a"}, "steps": [
                {"op": "record_read", "path": "a.ts", "timestamp_ms": 1, "offset": 1},
                {"op": "compact", "expect": {"user_blocks": ["nope"], "system_text": ""}}]}"#,
        ),
        (
            "`system_text`",
            r#"{"name": "x", "files": {"a.ts": "a"}, "steps": [
                {"op": "compact", "expect": {"system_text": "nope"}}]}"#,
        ),
        (
            "attachment [0] (FILE) placement",
            r#"{"name": "x", "files": {"a.ts": "a"}, "steps": [
                {"op": "record_read", "path": "a.ts", "timestamp_ms": 1, "offset": 1},
                {"op": "compact", "expect": {"attachments": [{"kind": "FILE", "placement": "SYSTEM"}]}}]}"#,
        ),
        (
            "attachment [0] (FILE) blocks",
            r#"{"name": "x", "files": {"a.ts": "a"}, "steps": [
                {"op": "record_read", "path": "a.ts", "timestamp_ms": 1, "offset": 1},
                {"op": "compact", "expect": {"attachments": [{"kind": "FILE", "blocks": ["a"]}]}}]}"#,
        ),
        (
            "unknown profile",
            r#"{"name": "x", "session": {"profile": "claude-code-9"}, "steps": [
                {"op": "estimate_tokens", "text": "abcd"}]}"#,
        ),
        (
            "expected 1 boundaries, got 0",
            r#"{"name": "x", "steps": [{"op": "import_transcript", "session_id": "i",
                "transcript": [{"type": "user", "uuid": "u1", "sessionId": "o", "cwd": "/o",
                  "message": {"role": "user", "content": "hi"}}],
                "expect": {"boundaries": [{"recorded": []}]}}]}"#,
        ),
        (
            "`warnings` (count)",
            r#"{"name": "x", "steps": [{"op": "import_transcript", "session_id": "i",
                "transcript": [{"type": "user", "uuid": "u1", "sessionId": "o", "cwd": "/o",
                  "message": {"role": "user", "content": "hi"}}],
                "expect": {"warnings": 7}}]}"#,
        ),
    ];
    let mut daemon = Daemon::start("neg", &[]);
    let client = daemon.wait_healthy().await;
    let work = daemon.dir.join("w");
    fs::create_dir_all(&work).unwrap();
    for (i, (want, scenario)) in cases.iter().enumerate() {
        let file = work.join(format!("case-{i}.json"));
        fs::write(&file, scenario).unwrap();
        match run_scenario(&client, &work, &file).await {
            Ok(()) => panic!("case {i} passed but should fail with {want:?}:\n{scenario}"),
            Err(e) => assert!(
                e.contains(want),
                "case {i}: the failure should mention {want:?}, got: {e}"
            ),
        }
    }
    daemon.stop();
}
