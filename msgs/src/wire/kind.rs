//! Numeric message types (aseba.md §2.2). Types below 0x8000 are user events.

/// Bootloader: leave the bootloader.
pub const BOOTLOADER_RESET: u16 = 0x8000;
/// Bootloader: read a page.
pub const BOOTLOADER_READ_PAGE: u16 = 0x8001;
/// Bootloader: write a page.
pub const BOOTLOADER_WRITE_PAGE: u16 = 0x8002;
/// Bootloader: 4 bytes of page data to write.
pub const BOOTLOADER_PAGE_DATA_WRITE: u16 = 0x8003;
/// Bootloader: page geometry.
pub const BOOTLOADER_DESCRIPTION: u16 = 0x8004;
/// Bootloader: 4 bytes of page data read.
pub const BOOTLOADER_PAGE_DATA_READ: u16 = 0x8005;
/// Bootloader: acknowledgement.
pub const BOOTLOADER_ACK: u16 = 0x8006;

/// Node description header.
pub const DESCRIPTION: u16 = 0x9000;
/// One named variable of a description.
pub const NAMED_VARIABLE_DESCRIPTION: u16 = 0x9001;
/// One local event of a description.
pub const LOCAL_EVENT_DESCRIPTION: u16 = 0x9002;
/// One native function of a description.
pub const NATIVE_FUNCTION_DESCRIPTION: u16 = 0x9003;
/// The node disconnected.
pub const DISCONNECTED: u16 = 0x9004;
/// Reply to GET_VARIABLES.
pub const VARIABLES: u16 = 0x9005;
/// VM error: array access out of bounds.
pub const ARRAY_ACCESS_OUT_OF_BOUNDS: u16 = 0x9006;
/// VM error: division by zero.
pub const DIVISION_BY_ZERO: u16 = 0x9007;
/// A running event was killed.
pub const EVENT_EXECUTION_KILLED: u16 = 0x9008;
/// Node-specific error or acknowledgement text.
pub const NODE_SPECIFIC_ERROR: u16 = 0x9009;
/// VM execution state (pc, flags).
pub const EXECUTION_STATE_CHANGED: u16 = 0x900A;
/// Reply to BREAKPOINT_SET.
pub const BREAKPOINT_SET_RESULT: u16 = 0x900B;
/// Reply to LIST_NODES.
pub const NODE_PRESENT: u16 = 0x900C;
/// Device information (protocol 6).
pub const DEVICE_INFO: u16 = 0x900D;
/// Changed variables (protocol 7).
pub const CHANGED_VARIABLES: u16 = 0x900E;

/// Broadcast: ask protocol-4 nodes for their description.
pub const GET_DESCRIPTION: u16 = 0xA000;
/// Write bytecode.
pub const SET_BYTECODE: u16 = 0xA001;
/// Reset the VM.
pub const RESET: u16 = 0xA002;
/// Run the VM.
pub const RUN: u16 = 0xA003;
/// Pause the VM.
pub const PAUSE: u16 = 0xA004;
/// Execute one instruction.
pub const STEP: u16 = 0xA005;
/// Stop the VM.
pub const STOP: u16 = 0xA006;
/// Ask for the execution state.
pub const GET_EXECUTION_STATE: u16 = 0xA007;
/// Set a breakpoint.
pub const BREAKPOINT_SET: u16 = 0xA008;
/// Clear a breakpoint.
pub const BREAKPOINT_CLEAR: u16 = 0xA009;
/// Clear every breakpoint.
pub const BREAKPOINT_CLEAR_ALL: u16 = 0xA00A;
/// Read variables.
pub const GET_VARIABLES: u16 = 0xA00B;
/// Write variables.
pub const SET_VARIABLES: u16 = 0xA00C;
/// Save the bytecode to non-volatile memory.
pub const WRITE_BYTECODE: u16 = 0xA00D;
/// Reboot the node.
pub const REBOOT: u16 = 0xA00E;
/// Suspend to RAM.
pub const SUSPEND_TO_RAM: u16 = 0xA00F;
/// Ask one node for its full description.
pub const GET_NODE_DESCRIPTION: u16 = 0xA010;
/// Broadcast: list the nodes.
pub const LIST_NODES: u16 = 0xA011;
/// Ask for device information (protocol 6).
pub const GET_DEVICE_INFO: u16 = 0xA012;
/// Set device information (protocol 6).
pub const SET_DEVICE_INFO: u16 = 0xA013;
/// Ask for changed variables (protocol 7).
pub const GET_CHANGED_VARIABLES: u16 = 0xA014;
/// Ask for one description fragment (protocol 8).
pub const GET_NODE_DESCRIPTION_FRAGMENT: u16 = 0xA015;

/// Invalid message type.
pub const INVALID: u16 = 0xFFFF;

/// Whether `kind` is a user (global) event.
pub const fn is_user_event(kind: u16) -> bool {
    kind < 0x8000
}

/// Whether `kind` is a known message type (user events included).
pub const fn is_known(kind: u16) -> bool {
    is_user_event(kind)
        || (kind >= BOOTLOADER_RESET && kind <= BOOTLOADER_ACK)
        || (kind >= DESCRIPTION && kind <= CHANGED_VARIABLES)
        || (kind >= GET_DESCRIPTION && kind <= GET_NODE_DESCRIPTION_FRAGMENT)
}

/// Whether `kind` is a host→node command whose first payload word is the destination node id.
pub const fn has_dest(kind: u16) -> bool {
    (kind >= BOOTLOADER_RESET && kind <= BOOTLOADER_PAGE_DATA_WRITE)
        || (kind > GET_DESCRIPTION && kind <= GET_NODE_DESCRIPTION_FRAGMENT && kind != LIST_NODES)
}

/// Name of a message type, for logs (`"user event"` for types below 0x8000).
pub const fn name(kind: u16) -> &'static str {
    match kind {
        0..=0x7FFF => "user event",
        BOOTLOADER_RESET => "BOOTLOADER_RESET",
        BOOTLOADER_READ_PAGE => "BOOTLOADER_READ_PAGE",
        BOOTLOADER_WRITE_PAGE => "BOOTLOADER_WRITE_PAGE",
        BOOTLOADER_PAGE_DATA_WRITE => "BOOTLOADER_PAGE_DATA_WRITE",
        BOOTLOADER_DESCRIPTION => "BOOTLOADER_DESCRIPTION",
        BOOTLOADER_PAGE_DATA_READ => "BOOTLOADER_PAGE_DATA_READ",
        BOOTLOADER_ACK => "BOOTLOADER_ACK",
        DESCRIPTION => "DESCRIPTION",
        NAMED_VARIABLE_DESCRIPTION => "NAMED_VARIABLE_DESCRIPTION",
        LOCAL_EVENT_DESCRIPTION => "LOCAL_EVENT_DESCRIPTION",
        NATIVE_FUNCTION_DESCRIPTION => "NATIVE_FUNCTION_DESCRIPTION",
        DISCONNECTED => "DISCONNECTED",
        VARIABLES => "VARIABLES",
        ARRAY_ACCESS_OUT_OF_BOUNDS => "ARRAY_ACCESS_OUT_OF_BOUNDS",
        DIVISION_BY_ZERO => "DIVISION_BY_ZERO",
        EVENT_EXECUTION_KILLED => "EVENT_EXECUTION_KILLED",
        NODE_SPECIFIC_ERROR => "NODE_SPECIFIC_ERROR",
        EXECUTION_STATE_CHANGED => "EXECUTION_STATE_CHANGED",
        BREAKPOINT_SET_RESULT => "BREAKPOINT_SET_RESULT",
        NODE_PRESENT => "NODE_PRESENT",
        DEVICE_INFO => "DEVICE_INFO",
        CHANGED_VARIABLES => "CHANGED_VARIABLES",
        GET_DESCRIPTION => "GET_DESCRIPTION",
        SET_BYTECODE => "SET_BYTECODE",
        RESET => "RESET",
        RUN => "RUN",
        PAUSE => "PAUSE",
        STEP => "STEP",
        STOP => "STOP",
        GET_EXECUTION_STATE => "GET_EXECUTION_STATE",
        BREAKPOINT_SET => "BREAKPOINT_SET",
        BREAKPOINT_CLEAR => "BREAKPOINT_CLEAR",
        BREAKPOINT_CLEAR_ALL => "BREAKPOINT_CLEAR_ALL",
        GET_VARIABLES => "GET_VARIABLES",
        SET_VARIABLES => "SET_VARIABLES",
        WRITE_BYTECODE => "WRITE_BYTECODE",
        REBOOT => "REBOOT",
        SUSPEND_TO_RAM => "SUSPEND_TO_RAM",
        GET_NODE_DESCRIPTION => "GET_NODE_DESCRIPTION",
        LIST_NODES => "LIST_NODES",
        GET_DEVICE_INFO => "GET_DEVICE_INFO",
        SET_DEVICE_INFO => "SET_DEVICE_INFO",
        GET_CHANGED_VARIABLES => "GET_CHANGED_VARIABLES",
        GET_NODE_DESCRIPTION_FRAGMENT => "GET_NODE_DESCRIPTION_FRAGMENT",
        _ => "unknown",
    }
}
