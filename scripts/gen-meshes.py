#!/usr/bin/env python3
"""Writes the Thymio-II meshes of thymio-rt's robot model (binary STL, metres) from the robot's published dimensions.

  meshes/thymio_body.stl   the body: 110 mm long (x, from the rear sensors at x = -0.03 to the front one at
                           x = 0.08), 112 mm wide, 53 mm high (z 0.005 .. 0.058 above the ground), the front rounded
                           on a circle of radius 0.08 around the wheel axis (the five front proximity sensors lie on
                           it), the rear corners rounded, the top edge bevelled, and a well on each side for a wheel
  meshes/thymio_wheel.stl  one wheel about y: radius 0.022 (the project's WHEEL_RADIUS), 15 mm wide, with a bar off
                           its centre on both faces so that RViz shows it turn

Frames as the URDF (nrt/engine/src/thymio/model.rs): the body in base_link (on the ground, midway between the
wheels), the wheel in its wheel link (its centre). Colours are the URDF's materials (STL has none).

Usage: python3 scripts/gen-meshes.py [--out DIR]   (default: meshes/ of the repository)
Run it after changing a dimension; the outputs are committed (tests/project/scripts_env.rs checks they are up to date).
Deterministic: coordinates are rounded to the micrometre before they are written as 32-bit floats.
"""
import argparse
import math
import pathlib
import struct
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# Body [m]
REAR_X = -0.03
HALF_WIDTH = 0.056
FRONT_RADIUS = 0.08
BOTTOM_Z = 0.005
TOP_Z = 0.058
REAR_CORNER = 0.008
BEVEL = 0.002
# Wheels [m] (the URDF's): radius, width, half axis of the default axis_length 0.0935
WHEEL_RADIUS = 0.022
WHEEL_WIDTH = 0.015
# The wheel wells: the side between x = -WELL and WELL and below WELL_TOP is set in to WELL_Y
WELL = 0.025
WELL_TOP = 0.046
WELL_Y = 0.038

ARC_STEPS = 48
CORNER_STEPS = 8
WHEEL_STEPS = 48


def outline(inset=0.0, x_min=None, x_max=None):
    """The body's outline seen from above, counter-clockwise, `inset` inside it (an exact offset: arcs and lines),
    cut to x_min <= x <= x_max (a convex polygon either way)."""
    r = FRONT_RADIUS - inset
    w = HALF_WIDTH - inset
    a0 = math.asin(w / r)
    pts = []
    # front arc, right to left
    for i in range(ARC_STEPS + 1):
        a = -a0 + 2 * a0 * i / ARC_STEPS
        pts.append((r * math.cos(a), r * math.sin(a)))
    # rear corners: left then right, their centres inside the corner
    c = REAR_CORNER - inset
    cx, cy = REAR_X + REAR_CORNER, HALF_WIDTH - REAR_CORNER
    for sy, start in ((1, math.pi / 2), (-1, math.pi)):
        for i in range(CORNER_STEPS + 1):
            a = start + (math.pi / 2) * i / CORNER_STEPS
            pts.append((cx + c * math.cos(a), sy * cy + c * math.sin(a)))
    if x_min is not None or x_max is not None:
        pts = clip(pts, x_min, x_max)
    return pts


def clip(poly, x_min, x_max):
    """A convex polygon cut to x_min <= x <= x_max (Sutherland-Hodgman on the two lines)."""
    def cut(points, inside, at):
        out = []
        for i, p in enumerate(points):
            q = points[(i + 1) % len(points)]
            if inside(p):
                out.append(p)
            if inside(p) != inside(q):
                t = (at - p[0]) / (q[0] - p[0])
                out.append((at, p[1] + t * (q[1] - p[1])))
        return out
    if x_min is not None:
        poly = cut(poly, lambda p: p[0] >= x_min, x_min)
    if x_max is not None:
        poly = cut(poly, lambda p: p[0] <= x_max, x_max)
    return poly


def prism(rings):
    """Triangles of a closed solid through `rings` [(z, convex ccw polygon)], bottom to top, all with as many
    points: side quads between consecutive rings, a fan on the bottom and on the top."""
    tris = []
    n = len(rings[0][1])
    v = [[(x, y, z) for (x, y) in poly] for z, poly in rings]
    for lo, hi in zip(v, v[1:]):
        for i in range(n):
            j = (i + 1) % n
            tris.append((lo[i], lo[j], hi[j]))
            tris.append((lo[i], hi[j], hi[i]))
    bottom, top = v[0], v[-1]
    for i in range(1, n - 1):
        tris.append((bottom[0], bottom[i + 1], bottom[i]))
        tris.append((top[0], top[i], top[i + 1]))
    return tris


def box(x0, x1, y0, y1, z0, z1):
    rect = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
    return prism([(z0, rect), (z1, rect)])


def body():
    tris = []
    # above the wheels: the whole outline, its top edge bevelled
    tris += prism([(WELL_TOP, outline()), (TOP_Z - BEVEL, outline()), (TOP_Z, outline(BEVEL))])
    # below: in front of and behind the wheel wells the whole outline, between them set in to the wells
    tris += prism([(BOTTOM_Z, outline(x_min=WELL)), (WELL_TOP, outline(x_min=WELL))])
    tris += prism([(BOTTOM_Z, outline(x_max=-WELL)), (WELL_TOP, outline(x_max=-WELL))])
    tris += box(-WELL, WELL, -WELL_Y, WELL_Y, BOTTOM_Z, WELL_TOP)
    return tris


def wheel():
    """A cylinder about y centred on the origin, and a bar off the centre through it."""
    half = WHEEL_WIDTH / 2
    ring = []
    for i in range(WHEEL_STEPS):
        a = 2 * math.pi * i / WHEEL_STEPS
        ring.append((WHEEL_RADIUS * math.cos(a), -WHEEL_RADIUS * math.sin(a)))
    # prism() builds about z: its y becomes the wheel's z and its z the wheel's y (the ring's clockwise order
    # there makes the faces outward after this mirror)
    tris = [tuple((x, z, y) for (x, y, z) in t) for t in prism([(-half, ring), (half, ring)])]
    bar = box(0.004, 0.016, -half - 0.001, half + 0.001, -0.003, 0.003)
    return tris + bar


def stl(name, tris):
    """Binary STL of `tris`, normals from the vertex order, coordinates rounded to the micrometre."""
    def r(p):
        return tuple(round(c, 6) + 0.0 for c in p)
    header = f"thymio-rt scripts/gen-meshes.py {name}".encode().ljust(80, b" ")
    out = [header, struct.pack("<I", len(tris))]
    for t in tris:
        a, b, c = (r(p) for p in t)
        u = [b[i] - a[i] for i in range(3)]
        v = [c[i] - a[i] for i in range(3)]
        n = (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])
        norm = math.sqrt(sum(x * x for x in n)) or 1.0
        n = tuple(round(x / norm, 6) + 0.0 for x in n)
        out.append(struct.pack("<12fH", *n, *a, *b, *c, 0))
    return b"".join(out)


MESHES = {"thymio_body.stl": body, "thymio_wheel.stl": wheel}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=pathlib.Path, default=ROOT / "meshes", help="where to write them")
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name, make in MESHES.items():
        (args.out / name).write_bytes(stl(name, make()))
        print(f"wrote {args.out / name}", file=sys.stderr)


if __name__ == "__main__":
    main()
