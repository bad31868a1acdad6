//! Output files are never left half-written: written to a temporary file beside the
//! final name, synced, then renamed into place; on any error the temporary file is
//! removed and the destination untouched.

use crate::error::{CliError, Result};
use crate::filter::AnyFilter;
use std::fs::{File, OpenOptions, Permissions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes a serialized filter to `path` (see [`write_file`]).
pub(crate) fn write_filter(path: &Path, filter: &AnyFilter) -> Result<()> {
    write_file(path, |file| serialize(filter, file))
}

/// Replaces the filter file `path` in place (see [`replace_file`]).
pub(crate) fn replace_filter(path: &Path, filter: &AnyFilter) -> Result<()> {
    replace_file(path, |file| serialize(filter, file))
}

fn serialize(filter: &AnyFilter, file: &mut File) -> std::io::Result<()> {
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    filter.write_to(&mut w).map_err(std::io::Error::other)?;
    w.flush()
}

/// Writes `path` with `body`: an existing regular file is replaced as by [`replace_file`],
/// a new file is written through a temporary file beside it. Other existing paths (a
/// device, a FIFO such as `/dev/stdout`) are written directly.
pub(crate) fn write_file(
    path: &Path,
    body: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => replace_file(path, body),
        Ok(_) => {
            let mut f = File::create(path).map_err(|e| CliError::io(path, e))?;
            body(&mut f).map_err(|e| CliError::io(path, e))
        }
        Err(_) => write_via_temporary(path, path, None, body),
    }
}

/// Replaces the regular file `path` through a temporary file beside it. A symbolic link
/// is followed (the file it names is replaced, the link stays) and the file's
/// permissions are kept.
pub(crate) fn replace_file(
    path: &Path,
    body: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> Result<()> {
    let target = std::fs::canonicalize(path).map_err(|e| CliError::io(path, e))?;
    let metadata = std::fs::metadata(&target).map_err(|e| CliError::io(path, e))?;
    if !metadata.is_file() {
        return Err(CliError::at(
            path.display(),
            "not a regular file, cannot be replaced in place; use -o",
        ));
    }
    write_via_temporary(path, &target, Some(metadata.permissions()), body)
}

/// Writes a new temporary file beside `target` (`create_new`: never through an existing
/// file or link), with `permissions` if given, syncs it and renames it to `target`.
/// `shown` names the file in error messages.
fn write_via_temporary(
    shown: &Path,
    target: &Path,
    permissions: Option<Permissions>,
    body: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> Result<()> {
    let mut tmp = target.as_os_str().to_owned();
    tmp.push(format!(".tmp-{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(|e| CliError::io(shown, e))?;
    crate::cleanup::register(&tmp);
    let result = (|| {
        let started = std::time::Instant::now();
        body(&mut file)?;
        file.flush()?;
        let written = started.elapsed();
        if let Some(p) = permissions {
            file.set_permissions(p)?;
        }
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, target)?;
        if crate::verbose() {
            eprintln!(
                "{}: written in {:.3} s, synced and renamed in {:.3} s",
                shown.display(),
                written.as_secs_f64(),
                (started.elapsed() - written).as_secs_f64()
            );
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    crate::cleanup::unregister(&tmp);
    result.map_err(|e| CliError::io(shown, e))
}
