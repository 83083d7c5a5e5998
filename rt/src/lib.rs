//! Real-time domain: links, the pinned RT loop, odometry, velocity mapping, safety.
