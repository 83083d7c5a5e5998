//! dynamic_reconfigure's protocol (the messages of `dynamic_reconfigure/Reconfigure`,
//! `<node>/parameter_descriptions` and `<node>/parameter_updates`) for a table of scalar parameters: one group
//! ([`GROUP`]), each parameter with its description, its value and its bounds. Who owns the parameters, and which
//! values are accepted, is the user's (thymio-rt: `nrt-ros1`'s `reconfigure`, over the layer's tables).

use super::ros1_msgs::dynamic_reconfigure as dr;

/// The one group.
pub const GROUP: &str = "Default";

/// A value dynamic_reconfigure carries.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `bool`.
    Bool(bool),
    /// `int` (32 bits on the wire).
    Int(i32),
    /// `double` (NaN compares equal to NaN in [`same`]).
    Double(f64),
    /// `str`.
    Str(String),
}

/// One parameter offered: its value now and its bounds (of the value's type).
#[derive(Debug, Clone, PartialEq)]
pub struct Parameter {
    /// Its name.
    pub name: String,
    /// What it is (shown by `rqt_reconfigure`).
    pub description: String,
    /// Its value now.
    pub value: Value,
    /// Its lowest value.
    pub min: Value,
    /// Its highest value.
    pub max: Value,
}

/// The values of `params`, as a `Config` (with the one group).
pub fn config(params: &[Parameter]) -> dr::Config {
    let mut c = with_values(params, |p| &p.value);
    c.groups.push(dr::GroupState {
        name: GROUP.into(),
        state: true,
        id: 0,
        parent: 0,
    });
    c
}

/// A `Config` of `params`, each with the value `value` gives it.
fn with_values(params: &[Parameter], value: impl Fn(&Parameter) -> &Value) -> dr::Config {
    let mut c = dr::Config::default();
    for p in params {
        let name = p.name.clone();
        match value(p).clone() {
            Value::Bool(value) => c.bools.push(dr::BoolParameter { name, value }),
            Value::Int(value) => c.ints.push(dr::IntParameter { name, value }),
            Value::Double(value) => c.doubles.push(dr::DoubleParameter { name, value }),
            Value::Str(value) => c.strs.push(dr::StrParameter { name, value }),
        }
    }
    c
}

/// The `ConfigDescription` of `params`: one group, min/max their bounds, `dflt` their values now.
pub fn description(params: &[Parameter]) -> dr::ConfigDescription {
    let parameters = params
        .iter()
        .map(|p| dr::ParamDescription {
            name: p.name.clone(),
            r#type: match p.value {
                Value::Bool(_) => "bool",
                Value::Int(_) => "int",
                Value::Double(_) => "double",
                Value::Str(_) => "str",
            }
            .into(),
            level: 0,
            description: p.description.clone(),
            edit_method: String::new(),
        })
        .collect();
    dr::ConfigDescription {
        groups: vec![dr::Group {
            name: GROUP.into(),
            r#type: String::new(),
            parameters,
            parent: 0,
            id: 0,
        }],
        max: with_values(params, |p| &p.max),
        min: with_values(params, |p| &p.min),
        dflt: config(params),
    }
}

/// The values a `Config` asks for, by name.
pub fn wanted(c: &dr::Config) -> Vec<(String, Value)> {
    let bools = c
        .bools
        .iter()
        .map(|p| (p.name.clone(), Value::Bool(p.value)));
    let ints = c.ints.iter().map(|p| (p.name.clone(), Value::Int(p.value)));
    let doubles = c
        .doubles
        .iter()
        .map(|p| (p.name.clone(), Value::Double(p.value)));
    let strs = c
        .strs
        .iter()
        .map(|p| (p.name.clone(), Value::Str(p.value.clone())));
    bools.chain(ints).chain(doubles).chain(strs).collect()
}

/// Whether two configurations hold the same values: two NaN doubles (a limit off) are the same.
pub fn same(a: &dr::Config, b: &dr::Config) -> bool {
    let doubles = a.doubles.len() == b.doubles.len()
        && a.doubles.iter().zip(&b.doubles).all(|(x, y)| {
            x.name == y.name && (x.value == y.value || (x.value.is_nan() && y.value.is_nan()))
        });
    doubles && a.bools == b.bools && a.ints == b.ints && a.strs == b.strs && a.groups == b.groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use roslibrust::{RosMessageType, RosServiceType};

    /// The `_md5sum`s of Debian's generated Python classes in `file` (python3-dynamic-reconfigure), in order (a
    /// service's file: its request's, its response's, then the service's).
    fn debian_md5s(file: &str) -> Vec<String> {
        let path = format!("/usr/lib/python3/dist-packages/dynamic_reconfigure/{file}");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!("{path}: {e}: install python3-dynamic-reconfigure (scripts/setup-ros1.sh)")
        });
        let sums: Vec<String> = text
            .lines()
            .filter(|l| l.trim_start().starts_with("_md5sum = "))
            .filter_map(|l| l.split(['"', '\'']).nth(1).map(str::to_owned))
            .collect();
        assert!(!sums.is_empty(), "no _md5sum in {path}");
        sums
    }

    #[test]
    fn the_vendored_definitions_have_debians_md5_sums() {
        let md5 = |d: roslibrust::MessageDescriptor| d.md5sum;
        let pairs = [
            (md5(dr::BoolParameter::DESCRIPTION), "msg/_BoolParameter.py"),
            (md5(dr::IntParameter::DESCRIPTION), "msg/_IntParameter.py"),
            (md5(dr::StrParameter::DESCRIPTION), "msg/_StrParameter.py"),
            (
                md5(dr::DoubleParameter::DESCRIPTION),
                "msg/_DoubleParameter.py",
            ),
            (md5(dr::GroupState::DESCRIPTION), "msg/_GroupState.py"),
            (md5(dr::Config::DESCRIPTION), "msg/_Config.py"),
            (
                md5(dr::ParamDescription::DESCRIPTION),
                "msg/_ParamDescription.py",
            ),
            (md5(dr::Group::DESCRIPTION), "msg/_Group.py"),
            (
                md5(dr::ConfigDescription::DESCRIPTION),
                "msg/_ConfigDescription.py",
            ),
        ];
        for (ours, file) in pairs {
            assert_eq!(ours, debian_md5s(file)[0], "{file}");
        }
        let srv = debian_md5s("srv/_Reconfigure.py");
        assert_eq!(
            [
                md5(dr::ReconfigureRequest::DESCRIPTION),
                md5(dr::ReconfigureResponse::DESCRIPTION),
                dr::Reconfigure::MD5SUM
            ],
            srv[..],
            "srv/_Reconfigure.py"
        );
    }

    fn double(name: &str, value: f64, min: f64, max: f64) -> Parameter {
        Parameter {
            name: name.into(),
            description: "d".into(),
            value: Value::Double(value),
            min: Value::Double(min),
            max: Value::Double(max),
        }
    }

    #[test]
    fn a_table_is_described_configured_and_read_back() {
        let table = [
            double("axis_length", 0.0935, 0.05, 0.15),
            Parameter {
                name: "on".into(),
                description: "d".into(),
                value: Value::Bool(true),
                min: Value::Bool(false),
                max: Value::Bool(true),
            },
        ];
        let d = description(&table);
        let types: Vec<&str> = d.groups[0]
            .parameters
            .iter()
            .map(|p| p.r#type.as_str())
            .collect();
        assert_eq!(types, ["double", "bool"]);
        assert_eq!(
            (d.min.doubles[0].value, d.max.doubles[0].value),
            (0.05, 0.15)
        );
        assert_eq!(d.dflt.groups[0].name, GROUP);
        assert!(d.min.groups.is_empty(), "the bounds carry no group state");
        let back = wanted(&config(&table));
        assert_eq!(
            back,
            [
                ("on".to_owned(), Value::Bool(true)),
                ("axis_length".to_owned(), Value::Double(0.0935))
            ]
        );
    }

    #[test]
    fn nan_doubles_are_the_same_value() {
        let a = config(&[double("limit", f64::NAN, 0.0, 1.0)]);
        assert!(same(&a, &a.clone()));
        let b = config(&[double("limit", 0.5, 0.0, 1.0)]);
        assert!(!same(&a, &b));
    }
}
