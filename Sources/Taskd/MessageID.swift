/// The journal `MESSAGE_ID` of every event taskd emits; `systemd/taskd.catalog` documents each one.
public enum MessageID: String, CaseIterable, Sendable {
    case runStarted = "8605484d98ae4477a29493037f9e10ec"
    case runCompleted = "e1494e7e0a484939823f308918b213dd"
    case runFailed = "796120e2ccf94bb180b6e3b029a8538f"
    case runCancelled = "f4792cb9d75342c1b0878721e5f0dc9c"
    case runExpired = "21a4b506cfcb43f3bd290307adcbf376"
    case runKilled = "4939f917eaf743b9b7ca11b4ef35fb69"
    case retryScheduled = "d1892297389f4e5ea2d10904b6e788ae"
    case coalesced = "0a2a55cb4cda494482f6903f8d647905"
    case daemonReady = "ec6ef32d746e48259e4b7695a2f415e5"
    case reloaded = "bf363b6378874defbffcaf696822ca41"
    case requestRejected = "d17a36ff297a4f96b037619afdb683b6"
    case cancelSignalled = "65366c20621d4d33a30c8aae2d16d2b7"
    case daemonStopping = "52b23083dbc14e6c89687332dbeb5e38"
    case configError = "4f1b5a2c3e6945d9bdb4f3bcc213e7a3"
    case request = "63f4b4b18a7149adb99ec1b509fead54"
    case lateResult = "8e69381a013142158ecdc7d516018eb0"
}
