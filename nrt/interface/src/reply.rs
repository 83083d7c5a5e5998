//! A held call: a service request (or an action goal) that the layer answers later — when the RT thread confirms, a
//! node answers, or a timeout passes — without the front end's threads waiting. Each front end gives its own handle
//! (ROS 2: r2r's request, answered whenever it is given back; ROS 1: the channel its service handler waits on).

use std::sync::mpsc::SyncSender;

/// Where the answer `A` of one held call goes. Answering consumes the handle: a call is answered once. The layer
/// keeps the calls of every front end together, as [`Held`].
pub trait Reply<A>: Send {
    /// Sends `answer` to the caller; a caller that left is not an error of the interface.
    fn reply(self: Box<Self>, answer: A);
}

/// A held call of any front end.
pub type Held<A> = Box<dyn Reply<A>>;

/// ROS 1's service handlers wait on a channel of capacity one for their answer.
impl<A: Send> Reply<A> for SyncSender<A> {
    fn reply(self: Box<Self>, answer: A) {
        // capacity one, answered once: never full; a handler that timed out has dropped the receiver
        let _ = self.try_send(answer);
    }
}

/// A closure that answers (ROS 2 wraps its request in one; tests record the answer).
pub struct ReplyFn<F>(pub F);

impl<A, F: FnOnce(A) + Send> Reply<A> for ReplyFn<F> {
    fn reply(self: Box<Self>, answer: A) {
        (self.0)(answer)
    }
}

/// Holds `f` as a call of the layer.
pub fn held<A, F: FnOnce(A) + Send + 'static>(f: F) -> Held<A> {
    Box::new(ReplyFn(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_channel_gets_the_answer_once_and_a_gone_caller_is_no_error() {
        let (tx, rx) = std::sync::mpsc::sync_channel::<u8>(1);
        let call: Held<u8> = Box::new(tx);
        call.reply(7);
        assert_eq!(rx.recv().unwrap(), 7);
        let (tx, rx) = std::sync::mpsc::sync_channel::<u8>(1);
        drop(rx);
        Box::new(tx).reply(1);
        let (tx, rx) = std::sync::mpsc::channel();
        held(move |a: u8| tx.send(a + 1).unwrap()).reply(1);
        assert_eq!(rx.recv().unwrap(), 2);
    }
}
