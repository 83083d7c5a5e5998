//! Unit tests of [`super`]: declarations, services and parameters.

use super::*;
use crate::controller_params::ParamSetError;
use crate::values::Pose2;

#[test]
fn declarations_are_checked() {
    let mut i = ControllerInit::new(RobotId(0), "c");
    i.publisher::<bool>("a", 1).unwrap();
    assert!(matches!(
        i.subscriber::<bool>("a", false),
        Err(DeclareError::Duplicate { .. })
    ));
    assert!(matches!(
        i.publisher::<f64>("Bad-Name", 1),
        Err(DeclareError::BadName { .. })
    ));
    assert!(matches!(
        i.publisher::<Outcome>("o", 1),
        Err(DeclareError::Unsupported { .. })
    ));
    assert!(matches!(
        i.service::<f64>("s"),
        Err(DeclareError::Unsupported { .. })
    ));
    assert!(matches!(
        i.parameter("p", 3.0, 0.0, 1.0, ""),
        Err(DeclareError::BadDefault { .. })
    ));
    for k in 0..MAX_PARAMS {
        let name: &'static str = Box::leak(format!("p{k}").into_boxed_str());
        i.parameter(name, 0.0, 0.0, 1.0, "").unwrap();
    }
    assert!(matches!(
        i.parameter("q", 0.0, 0.0, 1.0, ""),
        Err(DeclareError::TooManyParams { .. })
    ));
}

#[test]
fn services_answer_with_outcomes_and_refuse_wrong_kinds() {
    let mut i = ControllerInit::new(RobotId(1), "c");
    let mut s = i.service::<Pose2>("goal").unwrap();
    let (_p, mut nrt) = i.finish();
    let NrtEndpoint::Service { nrt: client, .. } = &mut nrt.endpoints[0] else {
        panic!("not a service")
    };
    let a = client.nrt_call(RosValue::Pose2D(Pose2::default())).unwrap();
    let b = client.nrt_call(RosValue::Bool(true)).unwrap();
    assert_eq!(s.rt_serve(|_| Outcome::ok("going")), 2);
    assert_eq!(
        client.nrt_poll_response(),
        Some((a, RosValue::Outcome(Outcome::ok("going"))))
    );
    let (id, RosValue::Outcome(o)) = client.nrt_poll_response().unwrap() else {
        panic!("not an outcome")
    };
    assert_eq!((id, o.success), (b, false));
}

#[test]
fn parameters_are_validated_and_reach_rt() {
    let mut i = ControllerInit::new(RobotId(0), "c");
    let k = i.parameter("gain", 1.0, 0.0, 5.0, "gain").unwrap();
    let (mut rt, mut nrt) = i.finish();
    assert_eq!(rt.get(k), 1.0);
    assert!(matches!(
        nrt.params.nrt_set("gain", 9.0),
        Err(ParamSetError::OutOfRange { .. })
    ));
    assert!(matches!(
        nrt.params.nrt_set("gain", f64::NAN),
        Err(ParamSetError::NotFinite(_))
    ));
    assert!(matches!(
        nrt.params.nrt_set("nope", 1.0),
        Err(ParamSetError::Unknown(_))
    ));
    assert!(!rt.rt_refresh());
    nrt.params.nrt_set("gain", 2.5).unwrap();
    assert!(rt.rt_refresh());
    assert_eq!((rt.get(k), nrt.params.get("gain")), (2.5, Some(2.5)));
}
