//! A controller's parameters: their declarations, the RT half ([`RtParams`], refreshed at the top of its cycle) and
//! the NRT half ([`NrtParams`], validated writes), declared through [`crate::ControllerInit::parameter`].

use crate::intake::{intake_kinds, RtIntake};
use crate::latest::NrtLatest;
use crate::record::RecInput;
use crate::ros_value::ParamBlock;

/// Why a parameter write was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParamSetError {
    /// No such parameter.
    #[error("no parameter `{0}`")]
    Unknown(String),
    /// NaN or infinite.
    #[error("parameter `{0}` must be a finite number")]
    NotFinite(&'static str),
    /// Out of its declared range.
    #[error("parameter `{name}` = {value} is outside [{min}, {max}]")]
    OutOfRange {
        /// Name.
        name: &'static str,
        /// Refused value.
        value: f64,
        /// Minimum.
        min: f64,
        /// Maximum.
        max: f64,
    },
}

/// A parameter's handle (index into its controller's block).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamId(pub(crate) u8);

/// A parameter's declaration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParamDecl {
    /// Name (ROS parameter `controllers.<controller>.<name>` on the robot's driver node).
    pub name: &'static str,
    /// Default.
    pub default: f64,
    /// Smallest accepted value.
    pub min: f64,
    /// Largest accepted value.
    pub max: f64,
    /// What it does (shown as the ROS parameter's description).
    pub description: &'static str,
}

/// RT half of a controller's parameters: refreshed at the top of its cycle.
#[derive(Debug)]
pub struct RtParams {
    pub(crate) cell: RtIntake<ParamsIn>,
    pub(crate) values: ParamBlock,
}

intake_kinds! {
    pub(crate) ParamsIn((): (), values: ParamBlock, (robot, controller)) =>
        RecInput::Params { robot, controller, values };
}

impl RtParams {
    /// Takes the newest values written by NRT; true if they changed.
    pub fn rt_refresh(&mut self) -> bool {
        self.cell.rt_read_new().map(|v| self.values = v).is_some()
    }

    /// The value of `p` as of the last refresh.
    pub fn get(&self, p: ParamId) -> f64 {
        self.values[p.0 as usize]
    }
}

/// NRT half of a controller's parameters: validated writes, reads of the values in effect.
#[derive(Debug)]
pub struct NrtParams {
    pub(crate) decls: Vec<ParamDecl>,
    pub(crate) cell: NrtLatest<ParamBlock>,
}

impl NrtParams {
    /// The declarations, in order.
    pub fn decls(&self) -> &[ParamDecl] {
        &self.decls
    }

    /// The value of `name` last written (or its default).
    pub fn get(&self, name: &str) -> Option<f64> {
        let i = self.decls.iter().position(|d| d.name == name)?;
        Some(self.cell.nrt_last()[i])
    }

    /// Checks `value` for `name` without writing it.
    pub fn check(&self, name: &str, value: f64) -> Result<usize, ParamSetError> {
        let i = self
            .decls
            .iter()
            .position(|d| d.name == name)
            .ok_or_else(|| ParamSetError::Unknown(name.to_owned()))?;
        let d = self.decls[i];
        if !value.is_finite() {
            return Err(ParamSetError::NotFinite(d.name));
        }
        if value < d.min || value > d.max {
            return Err(ParamSetError::OutOfRange {
                name: d.name,
                value,
                min: d.min,
                max: d.max,
            });
        }
        Ok(i)
    }

    /// Writes every value at once as the RT side once took them (a replay puts back recorded values: they were
    /// checked when first set).
    pub fn nrt_store_all(&mut self, values: ParamBlock) {
        self.cell.nrt_store(values);
    }

    /// Writes `value` to `name` (applied at the controller's next cycle).
    pub fn nrt_set(&mut self, name: &str, value: f64) -> Result<(), ParamSetError> {
        let i = self.check(name, value)?;
        let mut block = self.cell.nrt_last();
        block[i] = value;
        self.cell.nrt_store(block);
        Ok(())
    }
}
