//! The daemon's reads from disk, behind the checks of `diskaccess.py`: whole files and line
//! ranges (`diskaccess.read_text`, and every file the core renders).
//!
//! [`read_whole`] and [`read_range`] do what the Python path did in a dozen interpreter calls —
//! stat, refuse what is not a regular file, open without following a final symlink, check that
//! the file opened is the one stat saw, read (a whole file within a byte cap; a range streamed,
//! however large the file), refuse NUL bytes, count lines — in one call that runs without the
//! GIL. The path checks (session roots, deny globs) stay in Python, before it.
//!
//! Inline reads ([`Inline`]) run on the daemon's event loop: they take only files up to a size
//! and read with `preadv2(RWF_NOWAIT)`, which fails with `EAGAIN` rather than wait for the disk,
//! so the caller can move the read to a worker thread instead.

use std::ffi::CString;
use std::fs::{self, File, Metadata};
use std::io::{self, ErrorKind, Read};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::{AsRawFd, FromRawFd, RawFd};
use std::path::Path;

pub use crate::scan::count_newlines;

/// Why a read was refused or failed, named for the caller's message (see `diskaccess.py`).
#[derive(Debug)]
pub enum ReadFailure {
    /// `stat` failed (`NotFound`, `PermissionDenied` or another error).
    Stat(io::Error),
    /// A directory.
    Directory,
    /// A device, FIFO or socket.
    NotRegular,
    /// The caller flagged the name as binary (by extension); checked after the kind.
    BinaryName,
    /// Larger than the cap at `stat` time (the size).
    TooLarge(u64),
    /// An inline read that would wait for the disk, or of a file over the inline size.
    WouldBlock,
    /// `open` failed; `ELOOP` means the final component became a symlink.
    Open(io::Error),
    /// The file opened is not the one `stat` saw (swapped in between).
    Changed,
    /// A NUL byte: a binary file.
    Binary,
    /// Grew past the cap between `stat` and the read.
    Grew,
    /// The range's answer (its bytes as content and again as numbered text, with each line's
    /// number) would take this many bytes, over `Range::max_answer`; nothing of it was read.
    AnswerTooLarge(u64),
    /// `read` failed.
    Read(io::Error),
}

/// A whole file's bytes and what the caller reports about it.
#[derive(Debug)]
pub struct Whole {
    pub data: Vec<u8>,
    pub mtime_ns: i128,
    pub size: u64,
    /// Lines as the daemon counts them: `\n`s + 1, 0 for an empty file.
    pub total_lines: usize,
}

/// How an inline read is limited.
#[derive(Clone, Copy, Debug)]
pub struct Inline {
    /// Files larger than this are left to a worker thread.
    pub max_size: u64,
}

/// What [`read_whole`] checks.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The largest file read whole.
    pub max_bytes: u64,
    /// A NUL byte in this many leading bytes reports [`ReadFailure::Binary`] before the size is
    /// checked again (as if they had been read first, on their own).
    pub sniff_bytes: usize,
    /// The name has a binary extension: refuse once the kind is known to be a regular file.
    pub binary_name: bool,
    /// Read on the event loop: page cache only, bounded size.
    pub inline: Option<Inline>,
}

const CHUNK: usize = 1 << 16;

/// Read the file at `path` (a real path: symlinks already resolved) whole; see the module doc.
pub fn read_whole(path: &Path, limits: Limits) -> Result<Whole, ReadFailure> {
    let (file, fst) = open_checked(path, &limits, true)?;
    let cap = limits.max_bytes.saturating_add(1);
    let data = read_to_cap(&file, fst.len(), cap, limits.inline)?;
    let sniff = &data[..data.len().min(limits.sniff_bytes)];
    if memchr(0, sniff) {
        return Err(ReadFailure::Binary);
    }
    if data.len() as u64 > limits.max_bytes {
        return Err(ReadFailure::Grew);
    }
    if memchr(0, &data[sniff.len()..]) {
        return Err(ReadFailure::Binary);
    }
    let total_lines = if data.is_empty() {
        0
    } else {
        count_newlines(&data) + 1
    };
    Ok(Whole {
        data,
        mtime_ns: mtime_ns(&fst),
        size: fst.len(),
        total_lines,
    })
}

/// Which lines [`read_range`] reads.
#[derive(Clone, Copy, Debug)]
pub struct Range {
    /// The first line, 1-based.
    pub start: u64,
    /// How many lines; `None`: to the end.
    pub limit: Option<u64>,
    /// Read at most this many bytes of the range, cut back to a line boundary (or to a UTF-8
    /// character boundary when the first line alone is longer).
    pub head_bytes: Option<u64>,
    /// Refuse, before reading it, a range whose answer would take more bytes than this (see
    /// [`answer_bytes`]); unused with `head_bytes`.
    pub max_answer: Option<u64>,
}

/// The bytes an answer holding a range of `bytes` bytes and `lines` lines, numbered from
/// `first`, takes: the bytes as content, again as text, and `{n}\t` before each line.
pub fn answer_bytes(bytes: u64, lines: u64, first: u64) -> u64 {
    let last = first.saturating_add(lines.saturating_sub(1)).max(1);
    let digits = u64::from(last.ilog10()) + 1;
    bytes
        .saturating_mul(2)
        .saturating_add(lines.saturating_mul(digits + 1))
}

/// A range of a file's lines and what the caller reports about it.
#[derive(Debug)]
pub struct Ranged {
    pub data: Vec<u8>,
    pub mtime_ns: i128,
    pub size: u64,
    pub total_lines: u64,
    pub num_lines: u64,
    /// `head_bytes` cut the range short.
    pub truncated: bool,
}

/// Read lines `[start, start + limit)` of the file at `path` (a real path), streaming: the whole
/// file is scanned once in chunks for NUL bytes and line offsets (it may be far larger than any
/// cap), then the range is read. `data` excludes the terminator of its last line when the range
/// ends before EOF (and a `\r` before it), as Claude Code's `readFileInRange`.
pub fn read_range(path: &Path, limits: Limits, range: Range) -> Result<Ranged, ReadFailure> {
    let (file, fst) = open_checked(path, &limits, false)?;
    let mut io = Io {
        file: &file,
        pos: 0,
        inline: limits.inline.is_some(),
    };
    let start = range.start.max(1);
    let end = range.limit.map(|l| start.saturating_add(l)); // exclusive, 1-based

    // Pass 1: NUL bytes, the line count, and the byte offsets where lines `start` and `end`
    // begin. The first `sniff_bytes` are read (and judged) on their own.
    let mut start_off: Option<u64> = (start == 1).then_some(0);
    let mut end_off: Option<u64> = None;
    let mut line: u64 = 1; // the line the next byte belongs to
    let mut base: u64 = 0;
    // At most one chunk: every chunk is checked for NUL anyway (and a huge `sniff_bytes` must
    // not become a huge allocation).
    let mut buf = vec![0u8; limits.sniff_bytes.clamp(1, CHUNK)];
    let mut chunk_len = io.read(&mut buf)?;
    buf.resize(CHUNK.max(buf.len()), 0);
    while chunk_len > 0 {
        let chunk = &buf[..chunk_len];
        if memchr(0, chunk) {
            return Err(ReadFailure::Binary);
        }
        if start_off.is_some() && (end.is_none() || end_off.is_some()) {
            line += count_newlines(chunk) as u64;
        } else {
            for i in memchr::memchr_iter(b'\n', chunk) {
                line += 1;
                let at = base + i as u64 + 1;
                if line == start {
                    start_off = Some(at);
                }
                if Some(line) == end {
                    end_off = Some(at);
                }
            }
        }
        base += chunk_len as u64;
        chunk_len = io.read(&mut buf[..CHUNK])?;
    }
    let size = base;
    let total_lines = if size > 0 { line } else { 0 };
    let mtime_ns = mtime_ns(&fst);
    // A range of no lines (limit 0), or one starting past the end, is empty.
    let empty = range.limit == Some(0) || start > total_lines;
    let Some(start_off) = start_off.filter(|_| !empty) else {
        return Ok(Ranged {
            data: Vec::new(),
            mtime_ns,
            size,
            total_lines,
            num_lines: 0,
            truncated: false,
        });
    };

    // Pass 2: the range. One ending before EOF excludes its last line's terminator.
    let stop = end_off.map_or(size, |e| e - 1);
    let want = stop.saturating_sub(start_off);
    let range_lines = match end {
        None => total_lines - start + 1,
        Some(end) => end.min(total_lines + 1) - start,
    };
    if let (None, Some(max)) = (range.head_bytes, range.max_answer) {
        let need = answer_bytes(want, range_lines, start);
        if need > max {
            return Err(ReadFailure::AnswerTooLarge(need));
        }
    }
    let mut truncated = range.head_bytes.is_some_and(|h| want > h);
    if truncated && end_off.is_some() && range.head_bytes == Some(want - 1) {
        // One byte over the cap, and a range ending before EOF drops its last line's "\r": the
        // range fits when that byte is one.
        truncated = io.pread_full(1, stop - 1)? != b"\r";
    }
    let mut data = if let (true, Some(head)) = (truncated, range.head_bytes) {
        let mut data = io.pread_full(head.saturating_add(1), start_off)?;
        let limit = data
            .len()
            .min(usize::try_from(head).unwrap_or(usize::MAX) + 1);
        let cut = match memchr::memrchr(b'\n', &data[..limit]) {
            Some(cut) if cut > 0 => cut,
            _ => {
                // The first line alone is over the cap: cut on a UTF-8 character boundary.
                let mut cut = data.len().min(usize::try_from(head).unwrap_or(usize::MAX));
                while cut > 0 && cut < data.len() && data[cut] & 0xC0 == 0x80 {
                    cut -= 1;
                }
                cut
            }
        };
        data.truncate(cut);
        data
    } else {
        io.pread_full(want, start_off)?
    };
    if (end_off.is_some() || truncated) && data.last() == Some(&b'\r') {
        data.pop();
    }
    let num_lines = if truncated {
        count_newlines(&data) as u64 + 1
    } else {
        range_lines
    };
    Ok(Ranged {
        data,
        mtime_ns,
        size,
        total_lines,
        num_lines,
        truncated,
    })
}

/// Stat `path`, refuse what is not a regular file (before opening it: a device is never
/// opened), open it without following a final symlink and check that the file opened is the
/// one stat saw. `whole`: also refuse a file over `max_bytes`.
fn open_checked(
    path: &Path,
    limits: &Limits,
    whole: bool,
) -> Result<(File, Metadata), ReadFailure> {
    let st = fs::metadata(path).map_err(ReadFailure::Stat)?;
    check_kind(&st)?;
    if let Some(inline) = limits.inline {
        if st.len() > inline.max_size {
            return Err(ReadFailure::WouldBlock);
        }
    }
    if limits.binary_name {
        return Err(ReadFailure::BinaryName);
    }
    if whole && st.len() > limits.max_bytes {
        return Err(ReadFailure::TooLarge(st.len()));
    }
    let file = open_resolved(path)?;
    let fst = file.metadata().map_err(ReadFailure::Read)?;
    check_kind(&fst)?;
    if (fst.dev(), fst.ino()) != (st.dev(), st.ino()) {
        return Err(ReadFailure::Changed);
    }
    Ok((file, fst))
}

/// `struct open_how` of openat2(2) (libc's is non-exhaustive).
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

const RESOLVE_NO_SYMLINKS: u64 = 0x04;

/// Open `path` for reading. The caller resolved it (it holds no symlink) and checked it (roots,
/// deny globs); `O_NOFOLLOW` alone guards only the last component, and a directory on the way
/// swapped for a symlink since the check would lead the open elsewhere. So an absolute path is
/// opened with openat2(RESOLVE_NO_SYMLINKS): any symlink met is a change (ELOOP). Where openat2
/// is missing (before Linux 5.6, or filtered), the open is plain and the kernel's name for the
/// file opened (`/proc/self/fd/N`) must be the path checked.
fn open_resolved(path: &Path) -> Result<File, ReadFailure> {
    let flags = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    let c_path = path
        .is_absolute()
        .then(|| CString::new(path.as_os_str().as_bytes()).ok())
        .flatten();
    if let Some(c_path) = &c_path {
        let how = OpenHow {
            flags: flags as u64,
            mode: 0,
            resolve: RESOLVE_NO_SYMLINKS,
        };
        // SAFETY: a NUL-terminated path and a live `open_how` of the size passed.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                libc::AT_FDCWD,
                c_path.as_ptr(),
                &how as *const OpenHow,
                std::mem::size_of::<OpenHow>(),
            )
        };
        if fd >= 0 {
            // SAFETY: a file descriptor just opened, owned by nobody else.
            return Ok(unsafe { File::from_raw_fd(fd as RawFd) });
        }
        let err = io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::ELOOP) => return Err(ReadFailure::Changed),
            Some(libc::ENOSYS | libc::EPERM | libc::EINVAL | libc::E2BIG) => {} // no openat2
            _ => return Err(ReadFailure::Open(err)),
        }
    }
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(ReadFailure::Open)?;
    if c_path.is_some() {
        if let Ok(opened) = fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())) {
            if opened != path {
                return Err(ReadFailure::Changed);
            }
        }
    }
    Ok(file)
}

fn mtime_ns(st: &Metadata) -> i128 {
    i128::from(st.mtime()) * 1_000_000_000 + i128::from(st.mtime_nsec())
}

/// Sequential and positioned reads of an open file: blocking, or (`inline`) from the page
/// cache only.
struct Io<'a> {
    file: &'a File,
    pos: u64,
    inline: bool,
}

impl Io<'_> {
    /// Up to `buf.len()` bytes from the current position (fewer at EOF, or, inline, where the
    /// cached part ends: the next read then fails with `WouldBlock`).
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, ReadFailure> {
        let n = self.pread(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }

    fn pread(&self, buf: &mut [u8], offset: u64) -> Result<usize, ReadFailure> {
        if self.inline {
            return pread_nowait(self.file, buf, offset);
        }
        loop {
            match self.file.read_at(buf, offset) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(ReadFailure::Read(e)),
            }
        }
    }

    /// `n` bytes at `offset`, fewer only at EOF.
    fn pread_full(&self, n: u64, offset: u64) -> Result<Vec<u8>, ReadFailure> {
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        let mut data = vec![0u8; n];
        let mut got = 0;
        while got < n {
            let k = self.pread(&mut data[got..], offset + got as u64)?;
            if k == 0 {
                break;
            }
            got += k;
        }
        data.truncate(got);
        Ok(data)
    }
}

fn check_kind(st: &Metadata) -> Result<(), ReadFailure> {
    let ft = st.file_type();
    if ft.is_dir() {
        Err(ReadFailure::Directory)
    } else if ft.is_file() {
        Ok(())
    } else {
        debug_assert!(
            ft.is_block_device() || ft.is_char_device() || ft.is_fifo() || ft.is_socket()
        );
        Err(ReadFailure::NotRegular)
    }
}

/// Up to `cap` bytes to EOF, asking for `size` (what `fstat` saw) plus one bytes first, to see
/// the end in the same call: a read that stops short there, with exactly `size` bytes, is at
/// EOF and no further read is made to be told so. (A short read ends elsewhere too: an inline
/// read stops at the first page not cached, and then the next read says `WouldBlock`.)
fn read_to_cap(
    file: &File,
    size: u64,
    cap: u64,
    inline: Option<Inline>,
) -> Result<Vec<u8>, ReadFailure> {
    let first = usize::try_from(size.saturating_add(1).min(cap))
        .unwrap_or(usize::MAX)
        .max(1);
    let cap = usize::try_from(cap).unwrap_or(usize::MAX);
    let mut data: Vec<u8> = Vec::with_capacity(first);
    let mut want = first;
    while data.len() < cap {
        let room = want.min(cap - data.len());
        data.reserve(room);
        let spare = &mut data.spare_capacity_mut()[..room];
        // SAFETY: reads only write bytes into `spare`; `set_len` covers exactly what was read.
        let buf = unsafe { std::slice::from_raw_parts_mut(spare.as_mut_ptr().cast::<u8>(), room) };
        let n = if inline.is_some() {
            pread_nowait(file, buf, data.len() as u64)?
        } else {
            read_retrying(file, buf)?
        };
        if n == 0 {
            break;
        }
        // SAFETY: `n` bytes of the spare capacity were initialised by the read.
        unsafe { data.set_len(data.len() + n) };
        if n < room && data.len() as u64 == size {
            break; // at EOF where fstat saw it
        }
        want = CHUNK;
    }
    Ok(data)
}

fn read_retrying(mut file: &File, buf: &mut [u8]) -> Result<usize, ReadFailure> {
    loop {
        match file.read(buf) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(ReadFailure::Read(e)),
        }
    }
}

/// One `preadv2(RWF_NOWAIT)`: the bytes the page cache holds at `offset` (0 at EOF), or
/// [`ReadFailure::WouldBlock`] when none are cached or the file system cannot say.
fn pread_nowait(file: &File, buf: &mut [u8], offset: u64) -> Result<usize, ReadFailure> {
    let iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let offset = libc::off_t::try_from(offset).map_err(|_| ReadFailure::WouldBlock)?;
    loop {
        // SAFETY: `iov` points at `buf`, valid for writes of its length; the fd is open.
        let n = unsafe { libc::preadv2(file.as_raw_fd(), &iov, 1, offset, libc::RWF_NOWAIT) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let err = io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EINTR) => {}
            Some(libc::EAGAIN | libc::EOPNOTSUPP | libc::EINVAL | libc::ENOSYS) => {
                return Err(ReadFailure::WouldBlock)
            }
            _ => return Err(ReadFailure::Read(err)),
        }
    }
}

fn memchr(needle: u8, haystack: &[u8]) -> bool {
    memchr::memchr(needle, haystack).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn limits(max_bytes: u64) -> Limits {
        Limits {
            max_bytes,
            sniff_bytes: 8192,
            binary_name: false,
            inline: None,
        }
    }

    fn write(dir: &Path, name: &str, data: &[u8]) -> std::path::PathBuf {
        let p = dir.join(name);
        fs::File::create(&p)
            .and_then(|mut f| f.write_all(data))
            .unwrap();
        p
    }

    fn tmpdir(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("pc-readfile-{tag}-{}", std::process::id()));
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn counts_newlines_exactly() {
        for data in [
            &b""[..],
            b"\n",
            b"a\nb\n",
            b"\n\n\n\n\n\n\n\n\n",
            b"x\x8a\x0a\x0b\xff\n",
        ] {
            let want = data.iter().filter(|&&b| b == b'\n').count();
            assert_eq!(count_newlines(data), want, "{data:?}");
        }
        let long: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 256) as u8).collect();
        assert_eq!(
            count_newlines(&long),
            long.iter().filter(|&&b| b == b'\n').count()
        );
    }

    #[test]
    fn reads_ranges_by_the_line_model() {
        let d = tmpdir("range");
        let p = write(&d, "r.txt", b"l1\r\nl2\nl3\nl4");
        let range = |start, limit, head_bytes| {
            let r = read_range(
                &p,
                limits(0),
                Range {
                    start,
                    limit,
                    head_bytes,
                    max_answer: None,
                },
            )
            .unwrap();
            (r.data, r.total_lines, r.num_lines, r.truncated)
        };
        assert_eq!(range(2, None, None), (b"l2\nl3\nl4".to_vec(), 4, 3, false));
        assert_eq!(range(1, Some(1), None), (b"l1".to_vec(), 4, 1, false));
        assert_eq!(range(2, Some(2), None), (b"l2\nl3".to_vec(), 4, 2, false));
        assert_eq!(range(9, None, None), (Vec::new(), 4, 0, false));
        assert_eq!(range(1, Some(100), None).0, b"l1\r\nl2\nl3\nl4".to_vec());
        assert_eq!(range(1, None, Some(7)), (b"l1\r\nl2".to_vec(), 4, 2, true));
        assert_eq!(range(1, None, Some(1)), (b"l".to_vec(), 4, 1, true));
        // A head cap one byte short of a range ending in "\r\n" before EOF: the "\r" is not
        // part of the range, so it fits (and one byte shorter it does not).
        assert_eq!(range(1, Some(1), Some(2)), (b"l1".to_vec(), 4, 1, false));
        assert_eq!(range(1, Some(1), Some(1)), (b"l".to_vec(), 4, 1, true));
        let cr = write(&d, "cr.txt", b"\r\n");
        let only_cr = read_range(
            &cr,
            limits(0),
            Range {
                start: 1,
                limit: Some(1),
                head_bytes: Some(0),
                max_answer: None,
            },
        )
        .unwrap();
        assert_eq!(
            (only_cr.data, only_cr.num_lines, only_cr.truncated),
            (Vec::new(), 1, false)
        );
        // No lines asked for: nothing, wherever the range starts.
        for start in [0, 1, 2, 4, 9] {
            assert_eq!(
                range(start, Some(0), None),
                (Vec::new(), 4, 0, false),
                "{start}"
            );
        }
        // A huge sniff size only sizes the first read: no huge allocation.
        let huge = Limits {
            sniff_bytes: usize::MAX,
            ..limits(0)
        };
        let whole = Range {
            start: 1,
            limit: None,
            head_bytes: None,
            max_answer: None,
        };
        assert_eq!(
            read_range(&p, huge, whole).unwrap().data,
            b"l1\r\nl2\nl3\nl4".to_vec()
        );
        // An answer over `max_answer` is refused before the range is read: lines 2..4 are
        // 8 bytes ("l2\nl3\nl4"), twice, plus "2\t" "3\t" "4\t": 22 bytes.
        assert_eq!(answer_bytes(8, 3, 2), 22);
        let bounded = |max| Range {
            start: 2,
            limit: None,
            head_bytes: None,
            max_answer: Some(max),
        };
        assert_eq!(read_range(&p, limits(0), bounded(22)).unwrap().num_lines, 3);
        assert!(matches!(
            read_range(&p, limits(0), bounded(21)),
            Err(ReadFailure::AnswerTooLarge(22))
        ));
        assert_eq!(answer_bytes(0, 0, 1), 0);
        assert_eq!(answer_bytes(10, 10, 1), 20 + 10 * 3);
        let nul = write(
            &d,
            "n.txt",
            &[b'a'; 70_000]
                .iter()
                .chain(b"\0")
                .copied()
                .collect::<Vec<_>>(),
        );
        assert!(matches!(
            read_range(
                &nul,
                limits(0),
                Range {
                    start: 2,
                    limit: None,
                    head_bytes: None,
                    max_answer: None,
                }
            ),
            Err(ReadFailure::Binary)
        ));
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn refuses_a_symlink_anywhere_on_the_path() {
        // The caller passes a resolved path: a symlinked directory on the way means it changed
        // since it was checked (it may now lead out of the roots).
        let d = tmpdir("symdir");
        fs::create_dir_all(d.join("real")).unwrap();
        let p = write(&d.join("real"), "f.txt", b"hi\n");
        let link = d.join("link");
        let _ = fs::remove_file(&link);
        std::os::unix::fs::symlink(d.join("real"), &link).unwrap();
        assert_eq!(read_whole(&p, limits(100)).unwrap().data, b"hi\n".to_vec());
        assert!(matches!(
            read_whole(&link.join("f.txt"), limits(100)),
            Err(ReadFailure::Changed)
        ));
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn reads_whole_files_and_refuses_the_rest() {
        let d = tmpdir("whole");
        let p = write(&d, "a.txt", b"a\r\nb\nc\n");
        let w = read_whole(&p, limits(100)).unwrap();
        assert_eq!(
            (w.data.as_slice(), w.total_lines, w.size),
            (&b"a\r\nb\nc\n"[..], 4, 7)
        );
        let inline = Limits {
            inline: Some(Inline { max_size: 1 << 20 }),
            ..limits(100)
        };
        assert_eq!(read_whole(&p, inline).unwrap().data, w.data);
        let empty = write(&d, "e.txt", b"");
        assert_eq!(read_whole(&empty, limits(100)).unwrap().total_lines, 0);
        assert!(matches!(
            read_whole(&p, limits(3)),
            Err(ReadFailure::TooLarge(7))
        ));
        let small_inline = Limits {
            inline: Some(Inline { max_size: 3 }),
            ..limits(100)
        };
        assert!(matches!(
            read_whole(&p, small_inline),
            Err(ReadFailure::WouldBlock)
        ));
        let nul = write(&d, "n.txt", b"ab\0cd");
        assert!(matches!(
            read_whole(&nul, limits(100)),
            Err(ReadFailure::Binary)
        ));
        assert!(matches!(
            read_whole(&d, limits(100)),
            Err(ReadFailure::Directory)
        ));
        let named = Limits {
            binary_name: true,
            ..limits(100)
        };
        assert!(matches!(
            read_whole(&p, named),
            Err(ReadFailure::BinaryName)
        ));
        assert!(matches!(
            read_whole(&d.join("missing"), limits(100)),
            Err(ReadFailure::Stat(e)) if e.kind() == ErrorKind::NotFound
        ));
        assert!(matches!(
            read_whole(Path::new("/dev/null"), limits(100)),
            Err(ReadFailure::NotRegular)
        ));
        fs::remove_dir_all(&d).unwrap();
    }
}
