enum ProtocolCases { static var all: [BenchmarkCase] { [] } }
import BenchmarkHarness
