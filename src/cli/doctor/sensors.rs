//! The sensors' verdicts: live proximity and ground readings (min/median/max per sensor) against
//! the `obstacle_stop` and `cliff_stop` thresholds of the configuration, with a suggestion for
//! this table. Pure functions of the readings.

use super::checks::{Check, Status};
use serde::Serialize;
use serde_json::json;

/// Min, median and max of one sensor over the samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Spread {
    /// Smallest reading.
    pub min: i16,
    /// Median (the lower middle of an even count).
    pub median: i16,
    /// Largest reading.
    pub max: i16,
}

/// Per sensor (column) spreads of `samples` (rows of equal length); empty without samples.
pub fn spreads(samples: &[Vec<i16>]) -> Vec<Spread> {
    let width = samples.iter().map(Vec::len).min().unwrap_or(0);
    (0..width)
        .map(|i| {
            let mut col: Vec<i16> = samples.iter().map(|s| s[i]).collect();
            col.sort_unstable();
            Spread {
                min: col[0],
                median: col[(col.len() - 1) / 2],
                max: col[col.len() - 1],
            }
        })
        .collect()
}

/// The proximity verdict: with the robot standing clear, every sensor should read well below the
/// `obstacle_stop` threshold, or the reflex holds it where it stands. Suggests a threshold.
pub fn proximity(spreads: &[Spread], threshold: i16, enabled: bool) -> Check {
    let noise = spreads.iter().map(|s| s.max).max().unwrap_or(0);
    let suggested = suggest_obstacle(noise, threshold);
    let data = json!({"sensors": spreads, "threshold": threshold, "enabled": enabled, "suggested_threshold": suggested});
    let text = format!(
        "max reading {noise} with the robot standing; obstacle_stop.threshold {threshold} ({}), suggested {suggested}",
        if enabled { "on" } else { "off" }
    );
    if noise < threshold {
        return Check::new("proximity", Status::Ok, text).data(data);
    }
    let status = if enabled { Status::Fail } else { Status::Warn };
    Check::new(
        "proximity",
        status,
        format!("{text}: a sensor reads at or above the threshold"),
    )
    .fix(format!(
        "clear what stands before the robot and check again; if nothing does, set \
             obstacle_stop.threshold: {suggested} in the configuration"
    ))
    .data(data)
}

/// The threshold to suggest: the current one if the standing readings are below half of it, else
/// twice the largest standing reading (1..=4500, the parameter's range).
pub fn suggest_obstacle(noise: i16, threshold: i16) -> i16 {
    if i32::from(noise) * 2 <= i32::from(threshold) {
        threshold
    } else {
        (i32::from(noise) * 2).clamp(1, 4500) as i16
    }
}

/// The ground verdict: on the table `prox.ground.delta` must stay above the `cliff_stop`
/// threshold, or the reflex takes the table for a drop. Suggests half the table's lowest reading
/// (a drop reads near 0).
pub fn ground(spreads: &[Spread], threshold: i16, enabled: bool) -> Check {
    let floor = spreads.iter().map(|s| s.min).min().unwrap_or(0);
    let suggested = (floor / 2).clamp(1, 1023);
    let data = json!({"sensors": spreads, "threshold": threshold, "enabled": enabled, "suggested_threshold": suggested});
    let state = if enabled { "on" } else { "off" };
    if floor <= 0 {
        return Check::new(
            "ground",
            if enabled { Status::Fail } else { Status::Warn },
            format!("the ground sensors read {floor}: the robot is lifted or over a drop"),
        )
        .fix("put the robot on the table it will drive on and check again")
        .data(data);
    }
    let text = format!(
        "lowest table reading {floor}; cliff_stop.threshold {threshold} ({state}), suggested {suggested}"
    );
    if floor > threshold {
        return Check::new("ground", Status::Ok, text).data(data);
    }
    Check::new(
        "ground",
        if enabled { Status::Fail } else { Status::Warn },
        format!("{text}: the table reads as a drop"),
    )
    .fix(format!(
        "set cliff_stop.threshold: {suggested} in the configuration"
    ))
    .data(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spreads_per_sensor() {
        let s = spreads(&[vec![3, 10], vec![1, 30], vec![2, 20], vec![9, 20]]);
        assert_eq!(
            s[0],
            Spread {
                min: 1,
                median: 2,
                max: 9
            }
        );
        assert_eq!(
            s[1],
            Spread {
                min: 10,
                median: 20,
                max: 30
            }
        );
        assert!(spreads(&[]).is_empty());
    }

    #[test]
    fn proximity_against_the_threshold() {
        let quiet = [Spread {
            min: 0,
            median: 0,
            max: 120,
        }];
        let c = proximity(&quiet, 2000, false);
        assert_eq!(c.status, Status::Ok);
        assert_eq!(c.data["suggested_threshold"], 2000);
        let blocked = [Spread {
            min: 2100,
            median: 2200,
            max: 2300,
        }];
        assert_eq!(proximity(&blocked, 2000, false).status, Status::Warn);
        let on = proximity(&blocked, 2000, true);
        assert_eq!(on.status, Status::Fail);
        assert!(on.fix.unwrap().contains("obstacle_stop.threshold: 4500"));
        assert_eq!(suggest_obstacle(1200, 2000), 2400);
    }

    #[test]
    fn ground_against_the_threshold() {
        let table = [
            Spread {
                min: 400,
                median: 420,
                max: 450,
            },
            Spread {
                min: 380,
                median: 400,
                max: 410,
            },
        ];
        let c = ground(&table, 30, true);
        assert_eq!(c.status, Status::Ok);
        assert_eq!(c.data["suggested_threshold"], 190);
        let dark = [Spread {
            min: 25,
            median: 28,
            max: 30,
        }];
        assert_eq!(ground(&dark, 30, false).status, Status::Warn);
        let held = ground(&dark, 30, true);
        assert_eq!(held.status, Status::Fail);
        assert!(held.fix.unwrap().contains("cliff_stop.threshold: 12"));
        let lifted = ground(
            &[Spread {
                min: 0,
                median: 0,
                max: 0,
            }],
            30,
            false,
        );
        assert!(lifted.message.contains("lifted"));
    }
}
