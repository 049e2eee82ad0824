//! Output files that appear whole or not at all, and the cleanup of their temporary names
//! when the process is interrupted.
//!
//! A regular output file is written under a unique temporary name beside its target
//! (`.NAME.swarrow-tmp-PID-N`, NAME shortened so the whole stays a legal file name) and
//! renamed onto the target by [`AtomicFile::commit`]; dropping it uncommitted deletes the
//! temporary file. A symlink is resolved first, so the rename replaces the file it points at,
//! not the link. A target that exists and is not a regular file (a character device such as
//! `/dev/null`, a FIFO, a socket) is written directly: renaming over it would replace the
//! device with a regular file.
//!
//! A process killed outright (SIGKILL, the out-of-memory killer, a power cut) cannot remove
//! its temporary file. The next run writing the same target removes such leftovers: the
//! temporary names of that target whose PID is no live process on this machine
//! ([`remove_stale`]).
//!
//! Every live temporary name is listed in a fixed table that a SIGINT, SIGTERM or SIGHUP
//! handler reads: it unlinks them and exits with 128 + the signal number (130, 143, 129).
//! The handler only loads atomics and calls `unlink` and `_exit`, which are async-signal-safe.

use std::ffi::{CString, OsString};
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

use crate::error::{Error, Result};

/// Longest file name most file systems accept, in bytes.
const NAME_MAX: usize = 255;

/// An output file: a temporary file renamed onto its target on commit, or the target itself
/// when that is not a regular file.
pub struct AtomicFile {
    file: Option<File>,
    /// The temporary name; empty when writing directly or once committed.
    temp: PathBuf,
    target: PathBuf,
    /// Registry slot of `temp`, cleared when the temporary file is gone.
    slot: Option<usize>,
}

impl AtomicFile {
    /// Prepares `target` for writing. Problems the user can fix (missing or read-only
    /// directory, a directory as target) are `Error::Input`.
    pub fn create(target: &Path) -> Result<AtomicFile> {
        let cannot = |problem: String| Error::Input(format!("cannot write output {}: {problem}", target.display()));
        if target.as_os_str().is_empty() || target.file_name().is_none() {
            return Err(cannot("not a file name".into()));
        }
        // Through the kernel's own link resolution first: `/dev/stdout` on a pipe resolves
        // to `/proc/self/fd/1` -> `pipe:[N]`, no path to follow by hand.
        match std::fs::metadata(target) {
            Ok(meta) if meta.is_dir() => return Err(cannot("it is a directory".into())),
            Ok(meta) if !meta.is_file() => {
                // A device, FIFO or socket: written in place, never replaced.
                let file =
                    OpenOptions::new().write(true).open(target).map_err(|e| cannot(format!("cannot open: {e}")))?;
                return Ok(AtomicFile { file: Some(file), temp: PathBuf::new(), target: target.into(), slot: None });
            }
            _ => {}
        }
        let resolved = resolve_links(target).map_err(|e| cannot(format!("{e}")))?;
        let dir = match resolved.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        };
        match std::fs::metadata(&dir) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(cannot(format!("directory {} does not exist", dir.display())))
            }
            Err(e) => return Err(cannot(format!("directory {}: {e}", dir.display()))),
            Ok(meta) if !meta.is_dir() => return Err(cannot(format!("{} is not a directory", dir.display()))),
            Ok(_) => {}
        }
        // An existing file is replaced as `>` would overwrite it: refused where `>` would be
        // refused (no write permission), and the new file keeps its mode and, where this
        // process may set them, its owner and group (a private 600 file stays private).
        let existing = std::fs::metadata(&resolved).ok().filter(|m| m.is_file());
        if existing.is_some() && !writable(&resolved) {
            return Err(cannot(
                "it is read-only (the shell's > would refuse it too); remove it or make it writable".into(),
            ));
        }
        let name = resolved.file_name().map(|n| n.as_bytes().to_vec()).unwrap_or_default();
        remove_stale(&dir, &name);
        loop {
            let temp = dir.join(temp_name(&name));
            // Registered before it exists, so a signal never misses it.
            let slot = register(&temp);
            let mut options = OpenOptions::new();
            options.write(true).create_new(true);
            if let Some(meta) = &existing {
                use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
                options.mode(meta.mode() & 0o777);
            }
            match options.open(&temp) {
                Ok(file) => {
                    if let Some(meta) = &existing {
                        keep_owner_and_mode(&file, meta);
                    }
                    return Ok(AtomicFile { file: Some(file), temp, target: resolved, slot });
                }
                Err(e) => {
                    unregister(slot);
                    if e.kind() == io::ErrorKind::AlreadyExists {
                        continue; // a leftover of another process with our pid: next number
                    }
                    // EROFS has no stable ErrorKind under our minimum Rust: go by the code.
                    const READ_ONLY_FILESYSTEM: i32 = 30;
                    return Err(
                        if e.kind() == io::ErrorKind::PermissionDenied || e.raw_os_error() == Some(READ_ONLY_FILESYSTEM)
                        {
                            cannot(format!("directory {} is not writable ({e})", dir.display()))
                        } else {
                            cannot(format!("cannot create {}: {e}", temp.display()))
                        },
                    );
                }
            }
        }
    }

    /// The open file, for writing.
    pub fn file(&mut self) -> io::Result<&mut File> {
        self.file.as_mut().ok_or_else(|| io::Error::other("output file already closed"))
    }

    /// The path being written: the temporary name, or the target when written directly.
    pub fn writing_to(&self) -> &Path {
        if self.temp.as_os_str().is_empty() {
            &self.target
        } else {
            &self.temp
        }
    }

    /// Makes the output final: syncs a temporary file and renames it onto the target.
    pub fn commit(mut self) -> Result<()> {
        let Some(mut file) = self.file.take() else {
            return Err(Error::Internal(format!("{} committed twice", self.target.display())));
        };
        let context = || format!("writing {}", self.target.display());
        if self.temp.as_os_str().is_empty() {
            return file.flush().map_err(|e| Error::io(context(), e));
        }
        // Data on disk before the rename, so a crash never leaves a short file under the name.
        file.sync_all().map_err(|e| Error::io(context(), e))?;
        drop(file);
        std::fs::rename(&self.temp, &self.target)
            .map_err(|e| Error::io(format!("renaming {} to {}", self.temp.display(), self.target.display()), e))?;
        self.temp = PathBuf::new(); // committed: nothing left to clean up
        unregister(self.slot.take());
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        self.file.take();
        if !self.temp.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.temp);
        }
        unregister(self.slot.take());
    }
}

/// Whether this process may write `path` (`access(W_OK)`, as the shell's `>` finds out).
fn writable(path: &Path) -> bool {
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else { return true };
    // SAFETY: `c` is a valid NUL-terminated path for the call's duration.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

/// Gives the new file `file` the owner, group and mode of the file it replaces: the owner
/// and group where this process may (best effort: ownership is the system's to grant), then
/// the whole mode (after `chown`, which may clear set-id bits).
fn keep_owner_and_mode(file: &File, old: &std::fs::Metadata) {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::MetadataExt;
    let fd = file.as_raw_fd();
    // SAFETY: plain system calls on a descriptor we own.
    unsafe {
        let _ = libc::fchown(fd, old.uid(), u32::MAX);
        let _ = libc::fchown(fd, u32::MAX, old.gid());
        let _ = libc::fchmod(fd, (old.mode() & 0o7777) as libc::mode_t);
    }
}

/// Follows symlinks (also dangling ones, whose target is about to be created) to the path
/// the output really goes to.
fn resolve_links(path: &Path) -> io::Result<PathBuf> {
    let mut path = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = std::fs::read_link(&path)?;
                path = match path.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            _ => return Ok(path),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// `.NAME.swarrow-tmp-PID-N`, unique within this process and across processes, with NAME
/// cut so the whole name fits in [`NAME_MAX`] bytes.
fn temp_name(name: &[u8]) -> OsString {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let suffix = format!(".swarrow-tmp-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    let keep = name.len().min(NAME_MAX - 1 - suffix.len());
    let mut bytes = Vec::with_capacity(NAME_MAX);
    bytes.push(b'.');
    bytes.extend_from_slice(&name[..keep]);
    bytes.extend_from_slice(suffix.as_bytes());
    OsString::from_vec(bytes)
}

/// Removes the temporary files of target `name` in `dir` left by processes that are gone
/// (killed before they could clean up): names of [`temp_name`]'s form whose PID is no live
/// process here. Best effort: a file that cannot be listed or removed stays.
fn remove_stale(dir: &Path, name: &[u8]) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let file = entry.file_name();
        if temp_pid(file.as_bytes(), name).is_some_and(|pid| !process_alive(pid)) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The PID in `file` when it is a temporary name of target `name` (`.NAME.swarrow-tmp-PID-N`,
/// NAME possibly cut to fit [`NAME_MAX`]).
fn temp_pid(file: &[u8], name: &[u8]) -> Option<u32> {
    const MARK: &[u8] = b".swarrow-tmp-";
    let rest = file.strip_prefix(b".")?;
    let at = memchr::memmem::rfind(rest, MARK)?;
    let (kept, suffix) = (&rest[..at], &rest[at + MARK.len()..]);
    let whole = kept == name || (file.len() == NAME_MAX && !kept.is_empty() && name.starts_with(kept));
    let (pid, number) = std::str::from_utf8(suffix).ok()?.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (whole && digits(number)).then(|| pid.parse().ok()).flatten()
}

/// Whether a process with this PID exists (signal 0 checks without sending; EPERM means it
/// exists under another user).
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    // SAFETY: kill with signal 0 sends nothing.
    pid > 0 && (unsafe { libc::kill(pid, 0) } == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM))
}

/// Live temporary files, as C strings the signal handler can unlink. A full table only
/// means a file beyond the 64th is not cleaned up on a signal.
static LIVE: [AtomicPtr<libc::c_char>; 64] = [const { AtomicPtr::new(std::ptr::null_mut()) }; 64];

fn register(path: &Path) -> Option<usize> {
    let c = CString::new(path.as_os_str().as_bytes()).ok()?;
    let ptr = c.into_raw();
    for (i, slot) in LIVE.iter().enumerate() {
        if slot.compare_exchange(std::ptr::null_mut(), ptr, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
            return Some(i);
        }
    }
    // SAFETY: `ptr` came from `into_raw` above and was never shared.
    drop(unsafe { CString::from_raw(ptr) });
    None
}

fn unregister(slot: Option<usize>) {
    if let Some(i) = slot {
        // The string is leaked, not freed: a handler running on another thread may still be
        // reading it. A few dozen bytes per output file.
        LIVE[i].store(std::ptr::null_mut(), Ordering::SeqCst);
    }
}

extern "C" fn on_signal(signal: libc::c_int) {
    for slot in &LIVE {
        let path = slot.load(Ordering::SeqCst);
        if !path.is_null() {
            // SAFETY: a NUL-terminated string that is never freed; unlink is async-signal-safe.
            unsafe { libc::unlink(path) };
        }
    }
    // SAFETY: _exit is async-signal-safe and ends the process without running Rust code.
    unsafe { libc::_exit(128 + signal) };
}

/// Installs the handler for SIGINT, SIGTERM and SIGHUP (a signal set to be ignored, as
/// `nohup` does for SIGHUP, stays ignored). Called once at start-up by the binary.
pub fn install_signal_cleanup() {
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: plain sigaction calls with a zeroed, then filled, struct.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &mut old) != 0 || old.sa_sigaction == libc::SIG_IGN {
                continue;
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    #[test]
    fn temp_names_are_unique_and_fit_a_file_name() {
        let long = vec![b'x'; 250];
        let (a, b) = (temp_name(&long), temp_name(&long));
        assert_ne!(a, b);
        assert!(a.len() <= NAME_MAX, "{}", a.len());
        assert!(a.as_bytes().starts_with(b".xxx"));
        assert_eq!(temp_name(b"out.tsv").as_bytes()[..9], *b".out.tsv.");
    }

    #[test]
    fn commit_renames_and_drop_removes() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("o.bin");
        let mut f = AtomicFile::create(&target).unwrap();
        f.file().unwrap().write_all(b"abc").unwrap();
        assert_eq!(entries(dir.path()).len(), 1);
        assert!(!target.exists());
        f.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"abc");
        assert_eq!(entries(dir.path()), ["o.bin"]);
        let mut f = AtomicFile::create(&target).unwrap();
        f.file().unwrap().write_all(b"zz").unwrap();
        drop(f);
        assert_eq!(entries(dir.path()), ["o.bin"]);
        assert_eq!(std::fs::read(&target).unwrap(), b"abc");
    }

    #[test]
    fn symlinks_are_followed_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.tsv");
        std::fs::write(&real, b"old").unwrap();
        let link = dir.path().join("link.tsv");
        std::os::unix::fs::symlink("real.tsv", &link).unwrap();
        let mut f = AtomicFile::create(&link).unwrap();
        f.file().unwrap().write_all(b"new").unwrap();
        f.commit().unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
        // A dangling link: its target is created.
        let dangling = dir.path().join("d.tsv");
        std::os::unix::fs::symlink("made.tsv", &dangling).unwrap();
        let f = AtomicFile::create(&dangling).unwrap();
        f.commit().unwrap();
        assert!(dir.path().join("made.tsv").is_file());
        assert!(std::fs::symlink_metadata(&dangling).unwrap().file_type().is_symlink());
    }

    #[test]
    fn leftovers_of_dead_processes_are_removed_at_the_next_run() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("o.tsv");
        // A PID that is no process: one past the kernel's largest.
        let max: u32 = std::fs::read_to_string("/proc/sys/kernel/pid_max").unwrap().trim().parse().unwrap();
        let dead = format!(".o.tsv.swarrow-tmp-{}-0", max + 1);
        let alive = format!(".o.tsv.swarrow-tmp-{}-0", std::process::id());
        let other = format!(".p.tsv.swarrow-tmp-{}-0", max + 1);
        for name in [&dead, &alive, &other] {
            std::fs::write(dir.path().join(name), b"partial").unwrap();
        }
        AtomicFile::create(&target).unwrap().commit().unwrap();
        // Another target's leftover and a live process's file stay.
        assert_eq!(entries(dir.path()), [alive.clone(), other, "o.tsv".to_string()]);
        assert_eq!(temp_pid(dead.as_bytes(), b"o.tsv"), Some(max + 1));
        assert_eq!(temp_pid(b".o.tsv.swarrow-tmp-12-x", b"o.tsv"), None);
        assert_eq!(temp_pid(b".o.tsvx.swarrow-tmp-12-0", b"o.tsv"), None);
        // A name cut to fit: its leftover is found too.
        let long = vec![b'y'; 250];
        assert_eq!(temp_pid(temp_name(&long).as_bytes(), &long), Some(std::process::id()));
    }

    #[test]
    fn devices_are_written_in_place() {
        let mut f = AtomicFile::create(Path::new("/dev/null")).unwrap();
        assert_eq!(f.writing_to(), Path::new("/dev/null"));
        f.file().unwrap().write_all(b"gone").unwrap();
        f.commit().unwrap();
        assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
    }
}
