// sesame-bench [SECONDS_PER_ROUND] [ROUNDS]: one JSON line per benchmark, each on one core.
let arguments = CommandLine.arguments
let seconds = arguments.count > 1 ? Double(arguments[1]) ?? 1.5 : 1.5
let rounds = arguments.count > 2 ? Int(arguments[2]) ?? 3 : 3
CoreBenchmarks.run(seconds: seconds, rounds: rounds)
