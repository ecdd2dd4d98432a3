//! A writer thread fed with batches, in order, through a bounded channel,
//! handing consumed batches back for reuse: how streamed textures are
//! encoded beside the bake that produces their rows.

use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use crate::error::{FormatError, Result};

/// Consumed batches kept for reuse, at most.
pub(crate) const SPARES: usize = 4;

/// Batches waiting for the thread, at most (beyond the one it is on).
const PENDING: usize = 2;

/// A thread consuming batches of `T`; see the module documentation.
#[derive(Debug)]
pub(crate) struct Feed<T: Send + 'static> {
    sender: Option<SyncSender<T>>,
    spares: Receiver<T>,
    thread: Option<JoinHandle<Result<()>>>,
    /// What the thread writes, for errors ("EXR writer").
    what: &'static str,
}

impl<T: Send + 'static> Feed<T> {
    /// Starts `work` on a thread named `name`. It receives the batches in
    /// order until [`Self::finish`] and may hand consumed ones back (a full
    /// or abandoned spare channel simply drops them).
    pub(crate) fn spawn(
        name: &str,
        what: &'static str,
        work: impl FnOnce(&Receiver<T>, &SyncSender<T>) -> Result<()> + Send + 'static,
    ) -> Result<Self> {
        let (sender, receiver) = sync_channel::<T>(PENDING);
        let (spare_sender, spares) = sync_channel::<T>(SPARES);
        let thread = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || work(&receiver, &spare_sender))
            .map_err(FormatError::Io)?;
        Ok(Self {
            sender: Some(sender),
            spares,
            thread: Some(thread),
            what,
        })
    }

    /// Hands `batch` to the thread, waiting while [`PENDING`] batches are
    /// queued. When the thread has stopped, returns its error.
    pub(crate) fn send(&mut self, batch: T) -> Result<()> {
        match self.sender.as_ref().map(|s| s.send(batch)) {
            Some(Ok(())) => Ok(()),
            // The thread stopped early: its error explains why.
            _ => Err(self
                .join()
                .err()
                .unwrap_or_else(|| FormatError::Invalid(format!("{} stopped early", self.what)))),
        }
    }

    /// A batch the thread has consumed, if one is waiting.
    pub(crate) fn take_spare(&mut self) -> Option<T> {
        self.spares.try_recv().ok()
    }

    /// Closes the feed, waits for the thread and returns its result and the
    /// consumed batches not yet taken back.
    pub(crate) fn finish(mut self) -> Result<Vec<T>> {
        self.join()?;
        Ok(self.spares.try_iter().collect())
    }

    fn join(&mut self) -> Result<()> {
        self.sender.take();
        match self.thread.take() {
            Some(t) => t.join().unwrap_or_else(|_| {
                Err(FormatError::Invalid(format!(
                    "{} thread panicked",
                    self.what
                )))
            }),
            None => Ok(()),
        }
    }
}

impl<T: Send + 'static> Drop for Feed<T> {
    fn drop(&mut self) {
        let _ = self.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_arrive_in_order_and_come_back() {
        let mut feed = Feed::spawn("test-feed", "test writer", |rx, spares| {
            for (expected, batch) in (0u32..).zip(rx.iter()) {
                let batch: Vec<u32> = batch;
                if batch[0] != expected {
                    return Err(FormatError::Invalid(format!("got {} first", batch[0])));
                }
                let _ = spares.try_send(batch);
            }
            Ok(())
        })
        .unwrap();
        for i in 0..10 {
            feed.send(vec![i, 99]).unwrap();
        }
        let back = feed.finish().unwrap();
        assert!(!back.is_empty() && back.len() <= SPARES);
        assert!(back.iter().all(|b| b[1] == 99));
    }

    #[test]
    fn a_failed_thread_reports_its_own_error() {
        let mut feed = Feed::spawn("test-feed", "test writer", |rx, _| {
            let _ = rx.recv();
            Err(FormatError::Invalid("disk full".to_owned()))
        })
        .unwrap();
        let mut error = None;
        for i in 0..10u8 {
            if let Err(e) = feed.send(i) {
                error = Some(e);
                break;
            }
        }
        let error = error.unwrap_or_else(|| feed.finish().unwrap_err());
        assert!(error.to_string().contains("disk full"), "{error}");
    }
}
