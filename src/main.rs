fn main() {
    println!("thymio-rt");
}
