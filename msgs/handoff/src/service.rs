//! Requests from NRT served inside the RT cycle, through a ring pair.

use rtrb::{Consumer, Producer, RingBuffer};

/// Identifies a request so that the NRT side can match its response.
pub type RequestId = u32;

/// Why a call could not be queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ServiceError {
    /// Too many requests in flight.
    #[error("request queue full")]
    Full,
}

/// RT half: takes requests and answers them without blocking.
#[derive(Debug)]
pub struct RtServiceServer<Req, Resp> {
    requests: Consumer<(RequestId, Req)>,
    responses: Producer<(RequestId, Resp)>,
}

/// NRT half: sends requests and polls responses.
#[derive(Debug)]
pub struct NrtServiceClient<Req, Resp> {
    requests: Producer<(RequestId, Req)>,
    responses: Consumer<(RequestId, Resp)>,
    next: RequestId,
}

/// A service with `capacity` requests (and responses) in flight: `(rt, nrt)` halves.
///
/// # Example
///
/// ```
/// use handoff::service;
///
/// let (mut rt, mut nrt) = service::<i16, i32>(4);
/// let id = nrt.nrt_call(21).unwrap();
/// assert_eq!(rt.rt_serve(|x| i32::from(x) * 2), 1); // in the RT cycle: answers what is pending
/// assert_eq!(nrt.nrt_poll_response(), Some((id, 42)));
/// ```
pub fn service<Req: Copy + Send, Resp: Copy + Send>(
    capacity: usize,
) -> (RtServiceServer<Req, Resp>, NrtServiceClient<Req, Resp>) {
    let (rq_p, rq_c) = RingBuffer::new(capacity.max(1));
    let (rs_p, rs_c) = RingBuffer::new(capacity.max(1));
    (
        RtServiceServer {
            requests: rq_c,
            responses: rs_p,
        },
        NrtServiceClient {
            requests: rq_p,
            responses: rs_c,
            next: 0,
        },
    )
}

impl<Req: Copy + Send, Resp: Copy + Send> RtServiceServer<Req, Resp> {
    /// The next request, if any.
    pub fn rt_next_request(&mut self) -> Option<(RequestId, Req)> {
        self.requests.pop().ok()
    }

    /// Answers request `id`; false if the response queue is full (the caller may retry next
    /// cycle).
    pub fn rt_respond(&mut self, id: RequestId, response: Resp) -> bool {
        self.responses.push((id, response)).is_ok()
    }

    /// Serves every pending request with `f` (requests whose answer does not fit stay queued).
    pub fn rt_serve(&mut self, mut f: impl FnMut(Req) -> Resp) -> usize {
        let mut n = 0;
        while self.responses.slots() > 0 {
            let Ok((id, req)) = self.requests.pop() else {
                break;
            };
            let _ = self.responses.push((id, f(req)));
            n += 1;
        }
        n
    }
}

impl<Req: Copy + Send, Resp: Copy + Send> NrtServiceClient<Req, Resp> {
    /// Queues a request; returns its id.
    pub fn nrt_call(&mut self, request: Req) -> Result<RequestId, ServiceError> {
        let id = self.next;
        self.requests
            .push((id, request))
            .map_err(|_| ServiceError::Full)?;
        self.next = self.next.wrapping_add(1);
        Ok(id)
    }

    /// The next response, if any.
    pub fn nrt_poll_response(&mut self) -> Option<(RequestId, Resp)> {
        self.responses.pop().ok()
    }

    /// Whether the RT half is gone.
    pub fn nrt_peer_gone(&self) -> bool {
        self.responses.is_abandoned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_answered_with_their_ids() {
        let (mut rt, mut nrt) = service::<i32, i64>(2);
        let a = nrt.nrt_call(20).unwrap();
        let b = nrt.nrt_call(-3).unwrap();
        assert_eq!(nrt.nrt_call(0), Err(ServiceError::Full));
        assert_eq!(rt.rt_serve(|x| x as i64 * 2), 2);
        assert_eq!(nrt.nrt_poll_response(), Some((a, 40)));
        assert_eq!(nrt.nrt_poll_response(), Some((b, -6)));
        assert_eq!(nrt.nrt_poll_response(), None);
        let c = nrt.nrt_call(5).unwrap();
        let (id, req) = rt.rt_next_request().unwrap();
        assert_eq!((id, req), (c, 5));
        assert!(rt.rt_respond(id, 50));
        assert_eq!(nrt.nrt_poll_response(), Some((c, 50)));
        drop(rt);
        assert!(nrt.nrt_peer_gone());
    }

    #[test]
    fn a_full_response_queue_keeps_requests_pending() {
        let (mut rt, mut nrt) = service::<u8, u8>(1);
        nrt.nrt_call(1).unwrap();
        assert_eq!(rt.rt_serve(|x| x), 1);
        nrt.nrt_call(2).unwrap();
        assert_eq!(rt.rt_serve(|x| x), 0); // response slot still taken
        assert_eq!(nrt.nrt_poll_response().map(|r| r.1), Some(1));
        assert_eq!(rt.rt_serve(|x| x + 10), 1);
        assert_eq!(nrt.nrt_poll_response().map(|r| r.1), Some(12));
    }
}
