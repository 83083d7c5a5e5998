//! Built-in description of the Thymio-II, firmware 14 (aseba.md §4): 44 variables, 17 local
//! events, 60 natives, in the order and with the sizes the robot sends (verified by the reference
//! against the official v14 firmware image).

use super::std_natives::push_standard_natives;
use super::TargetDescription;

/// The Thymio-II firmware 14 description (44 variables, 17 local events, 60 natives).
pub fn thymio_ii_fw14() -> TargetDescription {
    let mut d = TargetDescription::new("thymio-II", 9, 1534, 32, 640);
    d.push_variable("_id", 1);
    d.push_variable("event.source", 1);
    d.push_variable("event.args", 32);
    d.push_variable("_fwversion", 2);
    d.push_variable("_productId", 1);
    d.push_variable("buttons._raw", 5);
    d.push_variable("button.backward", 1);
    d.push_variable("button.left", 1);
    d.push_variable("button.center", 1);
    d.push_variable("button.forward", 1);
    d.push_variable("button.right", 1);
    d.push_variable("buttons._mean", 5);
    d.push_variable("buttons._noise", 5);
    d.push_variable("prox.horizontal", 7);
    d.push_variable("prox.comm.rx._payloads", 7);
    d.push_variable("prox.comm.rx._intensities", 7);
    d.push_variable("prox.comm.rx", 1);
    d.push_variable("prox.comm.tx", 1);
    d.push_variable("prox.ground.ambiant", 2);
    d.push_variable("prox.ground.reflected", 2);
    d.push_variable("prox.ground.delta", 2);
    d.push_variable("motor.left.target", 1);
    d.push_variable("motor.right.target", 1);
    d.push_variable("_vbat", 2);
    d.push_variable("_imot", 2);
    d.push_variable("motor.left.speed", 1);
    d.push_variable("motor.right.speed", 1);
    d.push_variable("motor.left.pwm", 1);
    d.push_variable("motor.right.pwm", 1);
    d.push_variable("_integrator", 2);
    d.push_variable("acc", 3);
    d.push_variable("leds.top", 3);
    d.push_variable("leds.bottom.left", 3);
    d.push_variable("leds.bottom.right", 3);
    d.push_variable("leds.circle", 8);
    d.push_variable("temperature", 1);
    d.push_variable("rc5.address", 1);
    d.push_variable("rc5.command", 1);
    d.push_variable("mic.intensity", 1);
    d.push_variable("mic.threshold", 1);
    d.push_variable("mic._mean", 1);
    d.push_variable("timer.period", 2);
    d.push_variable("acc._tap", 1);
    d.push_variable("sd.present", 1);
    d.push_local_event("button.backward", "Backward button status changed");
    d.push_local_event("button.left", "Left button status changed");
    d.push_local_event("button.center", "Center button status changed");
    d.push_local_event("button.forward", "Forward button status changed");
    d.push_local_event("button.right", "Right button status changed");
    d.push_local_event("buttons", "Buttons values updated");
    d.push_local_event("prox", "Proximity values updated");
    d.push_local_event("prox.comm", "Data received on the proximity communication");
    d.push_local_event("tap", "A tap is detected");
    d.push_local_event("acc", "Accelerometer values updated");
    d.push_local_event("mic", "Fired when microphone intensity is above threshold");
    d.push_local_event(
        "sound.finished",
        "Fired when the playback of a user initiated sound is finished",
    );
    d.push_local_event("temperature", "Temperature value updated");
    d.push_local_event("rc5", "RC5 message received");
    d.push_local_event("motor", "Motor timer");
    d.push_local_event("timer0", "Timer 0");
    d.push_local_event("timer1", "Timer 1");
    d.push_native("_system.reboot", "Reboot the microcontroller", &[]);
    d.push_native(
        "_system.settings.read",
        "Read a setting",
        &[("address", 1), ("value", 1)],
    );
    d.push_native(
        "_system.settings.write",
        "Write a setting",
        &[("address", 1), ("value", 1)],
    );
    d.push_native(
        "_system.settings.flash",
        "Write the settings into flash",
        &[],
    );
    push_standard_natives(&mut d);
    d.push_native("_leds.set", "Set the led", &[("led", 1), ("brightness", 1)]);
    d.push_native("sound.record", "Start recording of rN.wav", &[("N", 1)]);
    d.push_native("sound.play", "Start playback of pN.wav", &[("N", 1)]);
    d.push_native("sound.replay", "Start playback of rN.wav", &[("N", 1)]);
    d.push_native(
        "sound.system",
        "Start playback of system sound N",
        &[("N", 1)],
    );
    d.push_native(
        "leds.circle",
        "Set circular ring leds",
        &[
            ("l0", 1),
            ("l1", 1),
            ("l2", 1),
            ("l3", 1),
            ("l4", 1),
            ("l5", 1),
            ("l6", 1),
            ("l7", 1),
        ],
    );
    d.push_native(
        "leds.top",
        "Set RGB top led",
        &[("red", 1), ("green", 1), ("blue", 1)],
    );
    d.push_native(
        "leds.bottom.left",
        "Set RGB botom left led",
        &[("red", 1), ("green", 1), ("blue", 1)],
    );
    d.push_native(
        "leds.bottom.right",
        "Set RGB botom right led",
        &[("red", 1), ("green", 1), ("blue", 1)],
    );
    d.push_native("sound.freq", "Play frequency", &[("Hz", 1), ("1/60s", 1)]);
    d.push_native(
        "leds.buttons",
        "Set buttons leds",
        &[("l0", 1), ("l1", 1), ("l2", 1), ("l3", 1)],
    );
    d.push_native(
        "leds.prox.h",
        "Set horizontal proximity leds",
        &[
            ("l0", 1),
            ("l1", 1),
            ("l2", 1),
            ("l3", 1),
            ("l4", 1),
            ("l5", 1),
            ("l6", 1),
            ("l7", 1),
        ],
    );
    d.push_native(
        "leds.prox.v",
        "Set vertical proximity leds",
        &[("l0", 1), ("l1", 1)],
    );
    d.push_native("leds.rc", "Set rc led", &[("led", 1)]);
    d.push_native("leds.sound", "Set sound led", &[("led", 1)]);
    d.push_native(
        "leds.temperature",
        "Set ntc led",
        &[("red", 1), ("blue", 1)],
    );
    d.push_native(
        "sound.wave",
        "Set the primary wave of the tone generator",
        &[("wave", 142)],
    );
    d.push_native(
        "prox.comm.enable",
        "Enable or disable the proximity communication",
        &[("state", 1)],
    );
    d.push_native(
        "sd.open",
        "Open a file on the SD card",
        &[("number", 1), ("status", 1)],
    );
    d.push_native(
        "sd.write",
        "Write data to the opened file",
        &[("data", -1), ("written", 1)],
    );
    d.push_native(
        "sd.read",
        "Read data from the opened file",
        &[("data", -1), ("read", 1)],
    );
    d.push_native(
        "sd.seek",
        "Seek the opened file",
        &[("position", 1), ("status", 1)],
    );
    d.push_native("_rf.nodeid", "Set Wireless Node ID", &[("nodeID", 1)]);
    d.push_native(
        "_rf.setup",
        "Set Wireless Channel and Network",
        &[("channel", 1), ("networkID", 1)],
    );
    d.push_native(
        "sound.duration",
        "Give duration in 1/10s of rN.wav",
        &[("N", 1), ("duration", 1)],
    );
    d.push_native("_poweroff", "Poweroff", &[]);
    d
}
