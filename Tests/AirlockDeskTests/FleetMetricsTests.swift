@testable import AirlockDesk
import Testing

/// Metrics of an instance of a fleet, which Prometheus sums across instances.
@Suite("Fleet metrics: one labelled file per instance")
struct FleetMetricsTests {
    @Test("metrics of an instance carry airlock_instance on every sample and go to a file of its own")
    func metricsPerInstance() {
        let text = Metrics(instance: "a").text()
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            #expect(line.contains("{airlock_instance=\"a\"") , "\(line)")
        }
        #expect(!Metrics().text().contains("airlock_instance"))
        #expect(Metrics.fileName("airlock.prom", instance: "a") == "airlock.a.prom")
        #expect(Metrics.fileName("metrics.txt", instance: "b") == "metrics.txt.b")
        #expect(Metrics.fileName("airlock.prom", instance: nil) == "airlock.prom")
    }
}
