//! Python binding of [`crate::fsutil`]: `realpath`.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use pyo3::prelude::*;

use crate::fsutil;

/// `os.path.realpath(path)` for an absolute path, or `None` where the caller must fall back to
/// Python (a relative path, a symlink loop, a link that cannot be read).
#[pyfunction]
fn realpath(py: Python<'_>, path: PathBuf) -> Option<OsString> {
    let bytes = path.as_os_str().as_bytes();
    py.detach(|| fsutil::realpath(bytes))
        .map(|v| OsStr::from_bytes(&v).to_owned())
}

/// Adds the file-system helpers to `postcompact._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(realpath, m)?)?;
    Ok(())
}
