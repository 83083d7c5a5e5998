//! The Aseba compiler: .aesl/.aseba source to bytecode, word-identical with the official compiler.
