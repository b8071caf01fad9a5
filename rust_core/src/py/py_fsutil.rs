//! Python binding of [`crate::fsutil`]: `realpath`.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use pyo3::prelude::*;

use crate::fsutil;

/// `os.path.realpath(path)` for an absolute path, or `None` where the caller must fall back to
/// Python (a relative path, a symlink loop, a link that cannot be read). With `base` (a real
/// absolute directory, e.g. an earlier result), `path` is relative to it and only its own
/// components are looked up: `realpath(base + "/" + path)`.
#[pyfunction]
#[pyo3(signature = (path, base = None))]
fn realpath(py: Python<'_>, path: PathBuf, base: Option<PathBuf>) -> Option<OsString> {
    let bytes = path.as_os_str().as_bytes();
    let real = match &base {
        None => py.detach(|| fsutil::realpath(bytes)),
        Some(b) => {
            let b = b.as_os_str().as_bytes();
            py.detach(|| fsutil::realpath_under(b, bytes))
        }
    };
    real.map(|v| OsStr::from_bytes(&v).to_owned())
}

/// Adds the file-system helpers to `postcompact._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(realpath, m)?)?;
    Ok(())
}
