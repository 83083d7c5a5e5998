//! How a [`Recording`] ends: its files closed, or left as they are after an error (readable up to their last
//! complete chunk), with the account of what reached the disk; the MCAP writer kept from being dropped while a
//! panic unwinds.

use super::*;

/// The MCAP writer of a file, which is never dropped while a panic unwinds: the `mcap` writer's own `Drop` finishes
/// the file and panics when a panic inside it left it without its stream (a panic during unwinding aborts the
/// process); it is leaked instead, with what its buffer held.
pub(super) struct Guarded(pub(super) Option<Writer<Counting<BufWriter<File>>>>);

impl Guarded {
    pub(super) fn get(&mut self) -> &mut Writer<Counting<BufWriter<File>>> {
        self.0
            .as_mut()
            .expect("a file's writer is taken only when it is closed")
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        if std::thread::panicking() {
            std::mem::forget(self.0.take());
        }
    }
}

impl Recording {
    /// Closes the current file and ends the recording. After an error, the file that failed is left as it is
    /// (readable up to its last complete chunk) and [`RecordError::Stopped`] names that error.
    pub fn finish(self) -> Result<RecordSummary, RecordError> {
        let (summary, result) = self.finish_with_account();
        result.map(|()| summary)
    }

    /// Closes the current file and ends the recording, as [`Recording::finish`], and says what is on disk whether
    /// or not it failed: after an error, the messages of the chunks written out whole (what a reader gets back)
    /// and the files' sizes, the file left without its summary in [`RecordSummary::cut`].
    pub fn finish_with_account(mut self) -> (RecordSummary, Result<(), RecordError>) {
        let mut cut = None;
        let closed = match (self.current.take(), &self.failed) {
            (Some(file), None) => {
                let path = file.path.clone();
                let r = self.close(file);
                if r.is_err() {
                    cut = Some(path);
                }
                r
            }
            (Some(file), Some(_)) => {
                // the writer failed: what it holds is not written (it could not be); the file is left as it is
                cut = Some(file.path.clone());
                self.leave(file);
                Ok(())
            }
            (None, _) => Ok(()),
        };
        let result = match (self.failed.take(), closed) {
            (Some(cause), _) => Err(RecordError::Stopped { cause }),
            (None, Err(e)) => Err(e),
            (None, Ok(())) => Ok(()),
        };
        let summary = RecordSummary {
            files: std::mem::take(&mut self.files),
            deleted: std::mem::take(&mut self.deleted),
            messages: self
                .channels
                .iter()
                .map(|c| {
                    (
                        c.topic.clone(),
                        if result.is_ok() {
                            c.messages
                        } else {
                            c.durable
                        },
                    )
                })
                .collect(),
            bytes: self.closed_bytes,
            cut,
        };
        (summary, result)
    }

    /// Ends the recording after a panic inside the MCAP writer (caught by the caller): the writer is leaked, not
    /// closed (it may panic again), and the account says what reached the disk (see
    /// [`Recording::finish_with_account`]).
    pub fn abandon_after_panic(mut self, why: &str) -> (RecordSummary, RecordError) {
        let path = self.naming.path(self.index);
        if let Some(mut file) = self.current.take() {
            std::mem::forget(file.writer.0.take());
            self.leave(file);
        }
        let error = RecordError::Panicked {
            path: path.clone(),
            what: why.to_owned(),
        };
        self.failed = Some(Arc::new(error.shadow()));
        let (mut summary, _) = self.finish_with_account();
        summary.cut = Some(path);
        (summary, error)
    }

    /// Counts a file that is left without its summary: its size on disk (a device: what was flushed to it).
    fn leave(&mut self, file: OpenFile) {
        let on_disk = std::fs::metadata(&file.path)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len());
        self.closed_bytes += on_disk.unwrap_or(file.durable_end);
        // the writer (and what its buffer holds) is dropped here: it failed, nothing more can be written
    }

    /// Finishes `file` (summary, footer) and writes it out; counts its bytes.
    pub(super) fn close(&mut self, mut file: OpenFile) -> Result<(), RecordError> {
        let path = file.path.clone();
        if let Err(e) = file.writer.get().finish() {
            self.leave(file);
            return Err(RecordError::from_mcap(
                &path,
                "closing the file (summary, footer)",
                e,
            ));
        }
        let writer = file.writer.0.take().expect("an open file has its writer");
        let mut out = writer.into_inner().into_inner();
        if let Err(source) = out.flush() {
            drop(out);
            self.leave(file);
            return Err(RecordError::Io {
                path: path.clone(),
                what: "writing the file out",
                source,
            });
        }
        self.closed_bytes += file.end.load(Ordering::Relaxed);
        for c in &mut self.channels {
            c.durable = c.messages;
        }
        Ok(())
    }
}
