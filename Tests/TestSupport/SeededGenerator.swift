/// A small deterministic generator (SplitMix64), shared by the test targets: a failing case is
/// reproduced from its printed seed.
public struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    /// Starts the sequence of `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next number of the sequence.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension SeededGenerator {
    /// A string of up to `maxLength` scalars drawn from `alphabet`: the characters a piece of text handling
    /// looks for and their neighbours, mixed in every order.
    public mutating func text(from alphabet: [Unicode.Scalar], maxLength: Int) -> String {
        var scalars = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...maxLength, using: &self) { scalars.append(alphabet.randomElement(using: &self)!) }
        return String(scalars)
    }
}
