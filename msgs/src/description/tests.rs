use super::*;

#[test]
fn thymio_fw14_counts_sizes_and_addresses() {
    let d = thymio_ii_fw14();
    assert_eq!((d.name.as_str(), d.protocol_version), ("thymio-II", 9));
    assert_eq!(
        (d.bytecode_size, d.stack_size, d.variables_size),
        (1534, 32, 640)
    );
    assert_eq!(
        (d.variables.len(), d.local_events.len(), d.natives.len()),
        (44, 17, 60)
    );
    assert_eq!(d.named_variables_size(), 128);
    // aseba.md §4.2
    for (name, addr, size) in [
        ("_id", 0, 1),
        ("event.args", 2, 32),
        ("_fwversion", 34, 2),
        ("_productId", 36, 1),
        ("button.center", 44, 1),
        ("prox.horizontal", 57, 7),
        ("prox.comm.rx", 78, 1),
        ("prox.ground.delta", 84, 2),
        ("motor.left.target", 86, 1),
        ("motor.right.target", 87, 1),
        ("motor.left.speed", 92, 1),
        ("_integrator", 96, 2),
        ("acc", 98, 3),
        ("leds.top", 101, 3),
        ("leds.circle", 110, 8),
        ("temperature", 118, 1),
        ("mic.threshold", 122, 1),
        ("timer.period", 124, 2),
        ("acc._tap", 126, 1),
        ("sd.present", 127, 1),
    ] {
        let v = d.variable(name).unwrap_or_else(|| panic!("{name}"));
        assert_eq!((v.address, v.size), (addr, size), "{name}");
    }
    // aseba.md §4.3: ids 0xFFFE - index
    assert_eq!(d.local_event_index("button.backward"), Some(0));
    assert_eq!(d.local_event_index("motor"), Some(14));
    assert_eq!(
        local_event_id(d.local_event_index("timer1").unwrap()),
        0xFFEE
    );
    assert_eq!(d.local_events[6].description, "Proximity values updated");
    // aseba.md §4.4
    for (name, id) in [
        ("_system.reboot", 0),
        ("_system.settings.flash", 3),
        ("math.copy", 4),
        ("math.rand", 24),
        ("deque.size", 25),
        ("deque.pop_back", 33),
        ("_leds.set", 34),
        ("leds.top", 40),
        ("sound.freq", 43),
        ("sound.wave", 50),
        ("prox.comm.enable", 51),
        ("_rf.setup", 57),
        ("_poweroff", 59),
    ] {
        assert_eq!(d.native_id(name), Some(id), "{name}");
    }
    let wave = &d.natives[50];
    assert_eq!(wave.params[0].size, 142);
    let get = &d.natives[d.native_id("deque.get").unwrap() as usize];
    assert_eq!(
        get.params.iter().map(|p| p.size).collect::<Vec<_>>(),
        vec![-1, -2, 1]
    );
    assert_eq!(
        d.natives[d.native_id("sd.write").unwrap() as usize].params[0].size,
        -1
    );
}

#[test]
fn playground_counts_and_layout() {
    let d = playground_thymio();
    assert_eq!((d.protocol_version, d.variables_size), (5, 586));
    assert_eq!(
        (d.variables.len(), d.local_events.len(), d.natives.len()),
        (30, 17, 52)
    );
    // aseba.md §4.7
    for (name, addr) in [
        ("_productId", 34),
        ("_fwversion", 35),
        ("button.backward", 37),
        ("prox.horizontal", 42),
        ("prox.comm.rx", 49),
        ("prox.ground.ambiant", 51),
        ("prox.ground.delta", 55),
        ("motor.left.target", 57),
        ("acc", 63),
        ("temperature", 66),
        ("timer.period", 71),
        ("sd.present", 73),
    ] {
        assert_eq!(d.variable(name).unwrap().address, addr, "{name}");
    }
    assert_eq!(d.named_variables_size(), 74);
    for (name, id) in [
        ("math.copy", 0),
        ("sound.record", 30),
        ("leds.circle", 34),
        ("leds.bottom.right", 36),
        ("sound.freq", 38),
        ("sound.duration", 51),
    ] {
        assert_eq!(d.native_id(name), Some(id), "{name}");
    }
    assert_eq!(d.natives[0].params, thymio_ii_fw14().natives[4].params);
}

#[test]
fn description_header_frame_matches_the_reference_bytes() {
    let d = thymio_ii_fw14();
    let m = d.header_message(d.protocol_version);
    // aseba.md §1.8
    let expected = [
        0x18, 0x00, 0x01, 0x00, 0x00, 0x90, 0x09, 0x74, 0x68, 0x79, 0x6D, 0x69, 0x6F, 0x2D, 0x49,
        0x49, 0x09, 0x00, 0xFE, 0x05, 0x20, 0x00, 0x80, 0x02, 0x2C, 0x00, 0x11, 0x00, 0x3C, 0x00,
    ];
    assert_eq!(m.to_frame(1).unwrap(), expected);
    assert_eq!(d.frame_count(), 122);
}
