//! The arena: walls, obstacles and a ground pattern, read from a small YAML file.
//!
//! ```yaml
//! width: 2.0            # m, walls around [0, width] × [0, height] unless `walls: false`
//! height: 1.5
//! obstacles:
//!   - {circle: [1.0, 0.8, 0.1]}          # x, y, radius
//!   - {box: [0.2, 0.2, 0.4, 0.3]}        # x_min, y_min, x_max, y_max
//! ground:                                 # reflectance 0 (black) … 1 (white); default 1
//!   - {box: [0.0, 0.70, 2.0, 0.74], reflectance: 0.05}
//!   - {circle: [1.5, 0.3, 0.2], reflectance: 0.0}
//! table: [0.0, 0.0, 1.2, 1.5]          # optional: the floor ends here (x_min, y_min, x_max, y_max);
//!                                       # outside it there is no floor (a table's edge: a drop)
//! robots:                                 # start poses x, y, heading (rad)
//!   - [0.5, 0.5, 0.0]
//! ```

use serde::Deserialize;
use std::path::Path;

/// A shape.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Shape {
    /// `[x, y, r]`.
    Circle([f64; 3]),
    /// `[x_min, y_min, x_max, y_max]`.
    Box([f64; 4]),
}

impl Shape {
    fn contains(&self, x: f64, y: f64) -> bool {
        match *self {
            Shape::Circle([cx, cy, r]) => (x - cx).powi(2) + (y - cy).powi(2) <= r * r,
            Shape::Box([x0, y0, x1, y1]) => x >= x0 && x <= x1 && y >= y0 && y <= y1,
        }
    }

    /// Distance along the ray (ox, oy) + t·(dx, dy) to the shape's boundary, if hit ahead.
    fn ray(&self, ox: f64, oy: f64, dx: f64, dy: f64) -> Option<f64> {
        match *self {
            Shape::Circle([cx, cy, r]) => ray_circle(ox, oy, dx, dy, cx, cy, r),
            Shape::Box([x0, y0, x1, y1]) => {
                let segs = [
                    (x0, y0, x1, y0),
                    (x1, y0, x1, y1),
                    (x1, y1, x0, y1),
                    (x0, y1, x0, y0),
                ];
                segs.iter()
                    .filter_map(|&(ax, ay, bx, by)| ray_segment(ox, oy, dx, dy, ax, ay, bx, by))
                    .reduce(f64::min)
            }
        }
    }

    /// Whether a disc of radius `r` at (x, y) overlaps the shape.
    fn overlaps_disc(&self, x: f64, y: f64, r: f64) -> bool {
        match *self {
            Shape::Circle([cx, cy, cr]) => (x - cx).powi(2) + (y - cy).powi(2) < (r + cr).powi(2),
            Shape::Box([x0, y0, x1, y1]) => {
                let (px, py) = (x.clamp(x0, x1), y.clamp(y0, y1));
                (x - px).powi(2) + (y - py).powi(2) < r * r
            }
        }
    }
}

/// A ground region.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct GroundPatch {
    /// Where.
    #[serde(flatten)]
    pub shape: Shape,
    /// Reflectance 0…1.
    pub reflectance: f64,
}

/// The arena.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Arena {
    /// Width (x) in m.
    pub width: f64,
    /// Height (y) in m.
    pub height: f64,
    /// Walls around the arena.
    #[serde(default = "yes")]
    pub walls: bool,
    /// Obstacles.
    #[serde(default)]
    pub obstacles: Vec<Obstacle>,
    /// Ground pattern over a white floor.
    #[serde(default)]
    pub ground: Vec<GroundPatch>,
    /// The table top `[x_min, y_min, x_max, y_max]`: no floor outside it (a drop, where the ground
    /// sensors see only ambient light). `None`: floor everywhere.
    #[serde(default)]
    pub table: Option<[f64; 4]>,
    /// Start poses.
    #[serde(default)]
    pub robots: Vec<[f64; 3]>,
}

/// An obstacle.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct Obstacle {
    /// Where.
    #[serde(flatten)]
    pub shape: Shape,
}

fn yes() -> bool {
    true
}

/// Why an arena file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ArenaError {
    /// Unreadable file.
    #[error("cannot read arena {path}: {error}")]
    Read {
        /// Path.
        path: String,
        /// Cause.
        error: std::io::Error,
    },
    /// Bad YAML or values.
    #[error("arena {path}: {message}")]
    Invalid {
        /// Path.
        path: String,
        /// What is wrong.
        message: String,
    },
}

impl Default for Arena {
    /// A 2 m × 2 m walled arena, white floor, no obstacle.
    fn default() -> Self {
        Arena {
            width: 2.0,
            height: 2.0,
            walls: true,
            obstacles: Vec::new(),
            ground: Vec::new(),
            table: None,
            robots: Vec::new(),
        }
    }
}

impl Arena {
    /// Reads an arena file.
    pub fn load(path: &Path) -> Result<Arena, ArenaError> {
        let p = path.display().to_string();
        let limits = msgs::yaml_guard::YamlLimits::CONFIG;
        let text =
            msgs::yaml_guard::read_to_string(path, limits).map_err(|error| ArenaError::Read {
                path: p.clone(),
                error,
            })?;
        Arena::parse(&text).map_err(|message| ArenaError::Invalid { path: p, message })
    }

    /// Parses arena YAML.
    pub fn parse(text: &str) -> Result<Arena, String> {
        // bounded before the YAML parser (its time grows with the square of the nesting)
        msgs::yaml_guard::check(text, msgs::yaml_guard::YamlLimits::CONFIG)
            .map_err(|e| e.to_string())?;
        let a: Arena = yaml_serde::from_str(text).map_err(|e| e.to_string())?;
        if !(a.width > 0.0 && a.height > 0.0 && a.width.is_finite() && a.height.is_finite()) {
            return Err(format!(
                "width and height must be positive, got {} × {}",
                a.width, a.height
            ));
        }
        if let Some(g) = a
            .ground
            .iter()
            .find(|g| !(0.0..=1.0).contains(&g.reflectance))
        {
            return Err(format!(
                "ground reflectance {} outside [0, 1]",
                g.reflectance
            ));
        }
        if let Some([x0, y0, x1, y1]) = a.table {
            if !([x0, y0, x1, y1].iter().all(|v| v.is_finite()) && x0 < x1 && y0 < y1) {
                return Err(format!(
                    "table [{x0}, {y0}, {x1}, {y1}] must be [x_min, y_min, x_max, y_max] with min < max"
                ));
            }
        }
        Ok(a)
    }

    /// Start pose of robot `i`: from the file, else spread along the middle of the arena.
    pub fn start_pose(&self, i: usize, count: usize) -> [f64; 3] {
        if let Some(p) = self.robots.get(i) {
            return *p;
        }
        let cols = (count as f64).sqrt().ceil().max(1.0) as usize;
        let rows = count.div_ceil(cols).max(1);
        let (c, r) = (i % cols, i / cols);
        [
            self.width * (c as f64 + 0.5) / cols as f64,
            self.height * (r as f64 + 0.5) / rows as f64,
            0.0,
        ]
    }

    /// Ground reflectance at (x, y): the last patch containing the point, else white.
    pub fn reflectance(&self, x: f64, y: f64) -> f64 {
        self.ground
            .iter()
            .rev()
            .find(|g| g.shape.contains(x, y))
            .map_or(1.0, |g| g.reflectance)
    }

    /// Whether there is floor under (x, y): everywhere unless a `table` ends it.
    pub fn has_floor(&self, x: f64, y: f64) -> bool {
        match self.table {
            Some(t) => Shape::Box(t).contains(x, y),
            None => true,
        }
    }

    /// Ground seen at (x, y): `Some(reflectance)` on the floor, `None` over the void past a
    /// table's edge.
    pub fn ground_at(&self, x: f64, y: f64) -> Option<f64> {
        self.has_floor(x, y).then(|| self.reflectance(x, y))
    }

    /// Distance to the nearest wall or obstacle along a ray, if within `max`.
    pub fn ray(&self, ox: f64, oy: f64, heading: f64, max: f64) -> Option<f64> {
        let (dx, dy) = (heading.cos(), heading.sin());
        let mut best = self
            .obstacles
            .iter()
            .filter_map(|o| o.shape.ray(ox, oy, dx, dy))
            .reduce(f64::min);
        if self.walls {
            let (w, h) = (self.width, self.height);
            for (ax, ay, bx, by) in [
                (0.0, 0.0, w, 0.0),
                (w, 0.0, w, h),
                (w, h, 0.0, h),
                (0.0, h, 0.0, 0.0),
            ] {
                if let Some(t) = ray_segment(ox, oy, dx, dy, ax, ay, bx, by) {
                    best = Some(best.map_or(t, |b: f64| b.min(t)));
                }
            }
        }
        best.filter(|t| *t <= max)
    }

    /// Whether a robot disc of radius `r` at (x, y) collides with walls or obstacles.
    pub fn collides(&self, x: f64, y: f64, r: f64) -> bool {
        (self.walls && (x < r || y < r || x > self.width - r || y > self.height - r))
            || self
                .obstacles
                .iter()
                .any(|o| o.shape.overlaps_disc(x, y, r))
    }
}

/// Ray / circle intersection distance (first hit ahead, or 0 when starting inside).
pub fn ray_circle(ox: f64, oy: f64, dx: f64, dy: f64, cx: f64, cy: f64, r: f64) -> Option<f64> {
    let (fx, fy) = (ox - cx, oy - cy);
    let b = fx * dx + fy * dy;
    let c = fx * fx + fy * fy - r * r;
    if c <= 0.0 {
        return Some(0.0);
    }
    let disc = b * b - c;
    if disc < 0.0 {
        return None;
    }
    let t = -b - disc.sqrt();
    (t >= 0.0).then_some(t)
}

/// Ray / segment intersection distance.
#[allow(clippy::too_many_arguments)]
fn ray_segment(
    ox: f64,
    oy: f64,
    dx: f64,
    dy: f64,
    ax: f64,
    ay: f64,
    bx: f64,
    by: f64,
) -> Option<f64> {
    let (ex, ey) = (bx - ax, by - ay);
    let den = dx * ey - dy * ex;
    if den.abs() < 1e-12 {
        return None;
    }
    let t = ((ax - ox) * ey - (ay - oy) * ex) / den;
    let u = ((ax - ox) * dy - (ay - oy) * dx) / den;
    (t >= 0.0 && (0.0..=1.0).contains(&u)).then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_example() {
        let a = Arena::parse(
            "width: 2.0\nheight: 1.5\nobstacles:\n  - {circle: [1.0, 0.8, 0.1]}\n  - {box: [0.2, 0.2, 0.4, 0.3]}\nground:\n  - {box: [0.0, 0.70, 2.0, 0.74], reflectance: 0.05}\nrobots:\n  - [0.5, 0.5, 0.0]\n",
        )
        .unwrap();
        assert_eq!(a.obstacles.len(), 2);
        assert_eq!(a.reflectance(1.0, 0.72), 0.05);
        assert_eq!(a.reflectance(1.0, 0.1), 1.0);
        assert_eq!(a.start_pose(0, 1), [0.5, 0.5, 0.0]);
        assert!(Arena::parse("width: -1\nheight: 1\n").is_err());
        assert!(Arena::parse("width: 1\nheight: 1\nbogus: 3\n").is_err());
    }

    #[test]
    fn shipped_arenas_load_and_start_poses_are_free() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/arena");
        let mut n = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "yaml") {
                let a = Arena::load(&path).unwrap_or_else(|e| panic!("{e}"));
                for i in 0..a.robots.len().max(1) {
                    let [x, y, _] = a.start_pose(i, a.robots.len().max(1));
                    assert!(!a.collides(x, y, 0.075), "{}: robot {i}", path.display());
                }
                n += 1;
            }
        }
        assert!(n >= 3, "arena files in {}", dir.display());
        // the line track: the robot starts with both ground sensors over the black strip
        let line = Arena::load(&dir.join("line.yaml")).unwrap();
        let [x, y, _] = line.start_pose(0, 1);
        for dy in [-0.01155, 0.01155] {
            assert!(line.reflectance(x + 0.07157, y + dy) < 0.1);
        }
        // a closed rounded track: black all along its centre line (straights and quarter
        // circles of radius 0.2 m), white 5 cm either side of it
        for k in 0..400 {
            let s = k as f64 / 400.0 * 4.0;
            let (side, u) = (s as usize, s.fract());
            // centre line: side 0 bottom (+x), 1 right (+y), 2 top (−x), 3 left (−y)
            let a = std::f64::consts::FRAC_PI_2 * (side as f64 - 1.0 + u);
            let centre = [(1.4, 0.6), (1.4, 1.4), (0.6, 1.4), (0.6, 0.6)][side];
            let (px, py) = (centre.0 + 0.2 * a.cos(), centre.1 + 0.2 * a.sin());
            assert!(line.reflectance(px, py) < 0.1, "corner at ({px}, {py})");
            for off in [0.05, -0.05] {
                let (qx, qy) = (
                    centre.0 + (0.2 + off) * a.cos(),
                    centre.1 + (0.2 + off) * a.sin(),
                );
                assert!(line.reflectance(qx, qy) > 0.9, "beside at ({qx}, {qy})");
            }
        }
        for (px, py) in [(1.0, 0.4), (1.6, 1.0), (1.0, 1.6), (0.4, 1.0)] {
            assert!(line.reflectance(px, py) < 0.1);
            assert!(line.reflectance(px + 0.05, py + 0.05) > 0.9);
        }
        assert_eq!(
            Arena::load(&dir.join("default.yaml")).unwrap(),
            Arena::default()
        );
    }

    #[test]
    fn a_table_ends_the_floor() {
        let a =
            Arena::parse("width: 2.0\nheight: 1.0\nwalls: false\ntable: [0.0, 0.0, 1.2, 1.0]\n")
                .unwrap();
        assert_eq!(a.ground_at(1.19, 0.5), Some(1.0));
        assert_eq!(a.ground_at(1.21, 0.5), None);
        assert!(Arena::default().has_floor(5.0, 5.0));
        let e = Arena::parse("width: 2.0\nheight: 1.0\ntable: [1.0, 0.0, 0.5, 1.0]\n").unwrap_err();
        assert!(e.contains("table"), "{e}");
        // the shipped table arena: the robot starts on the table, facing its edge
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/arena");
        let t = Arena::load(&dir.join("table.yaml")).unwrap();
        let [x, y, th] = t.start_pose(0, 1);
        assert!(t.has_floor(x, y) && th == 0.0);
        assert!(
            t.has_floor(x + 0.85, y) && !t.has_floor(x + 1.0, y),
            "the edge 0.85–1 m ahead"
        );
        assert!(t.reflectance(x + 0.22, y) < 0.1, "black tape on the way");
    }

    #[test]
    fn rays_hit_walls_and_obstacles() {
        let mut a = Arena::default();
        assert!((a.ray(1.9, 1.0, 0.0, 1.0).unwrap() - 0.1).abs() < 1e-9);
        assert_eq!(a.ray(1.0, 1.0, 0.0, 0.5), None);
        a.obstacles.push(Obstacle {
            shape: Shape::Circle([1.2, 1.0, 0.1]),
        });
        assert!((a.ray(1.0, 1.0, 0.0, 1.0).unwrap() - 0.1).abs() < 1e-9);
        assert!(a.collides(0.05, 1.0, 0.08));
        assert!(a.collides(1.1, 1.0, 0.08));
        assert!(!a.collides(0.5, 0.5, 0.08));
    }
}
