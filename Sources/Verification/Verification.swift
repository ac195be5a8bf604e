@_exported import SignalPrimitives
