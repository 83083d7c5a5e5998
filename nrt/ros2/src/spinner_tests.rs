//! Unit tests of [`super`]: the wake topics and the spinner against a live context.

use super::*;

#[test]
fn wake_topics_are_hidden_and_distinct() {
    let (a, b) = (wake_topic(), wake_topic());
    assert_ne!(a, b);
    for t in [&a, &b] {
        let leaf = t.trim_start_matches('/');
        assert!(leaf.split('/').all(crate::names::is_valid_token), "{t}");
        assert!(leaf.starts_with('_'), "hidden: {t}");
    }
}

/// Taking the node while the spinner waits wakes it: ten takings, each while the spinner
/// is in a fresh wait, end long before the ten timeouts they would have waited for without
/// the wake-up (about five on average).
#[test]
fn taking_the_node_wakes_the_spinner() {
    let node = r2r::Node::create(
        crate::smoke_tests::context(),
        &format!("spinner_wake_{}", std::process::id()),
        "",
    )
    .expect("node");
    let shared = SharedNode::new(node);
    let spinner = Spinner::start(shared.clone(), Doorbell::new()).expect("spinner");
    let start = Instant::now();
    for _ in 0..10 {
        // until the spinner holds the node again: it is in, or entering, its wait
        while shared.node.try_lock().is_ok() {
            assert!(start.elapsed() < SPIN_TIMEOUT * 10, "the spinner stopped");
            std::thread::yield_now();
        }
        let mut access = shared.access();
        access.get();
    }
    let took = start.elapsed();
    assert!(took < SPIN_TIMEOUT * 3, "ten takings took {took:?}");
    let stop = Instant::now();
    drop(spinner);
    assert!(
        stop.elapsed() < SPIN_TIMEOUT,
        "stopping took {:?}",
        stop.elapsed()
    );
}
