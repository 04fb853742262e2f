import TaskScheduling

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
    case triggerSkipped = "d8325cf6120e404883850532f14efc60"
    case daemonReady = "ec6ef32d746e48259e4b7695a2f415e5"
    case reloaded = "bf363b6378874defbffcaf696822ca41"
    case requestRejected = "d17a36ff297a4f96b037619afdb683b6"
    case cancelSignalled = "65366c20621d4d33a30c8aae2d16d2b7"
    case daemonStopping = "52b23083dbc14e6c89687332dbeb5e38"
    case configError = "4f1b5a2c3e6945d9bdb4f3bcc213e7a3"
    case request = "63f4b4b18a7149adb99ec1b509fead54"
    case lateResult = "8e69381a013142158ecdc7d516018eb0"
    case clockChanged = "f523fbdd132e405684d766124bf7af8f"
    case runQueued = "fbb2aa91188149af85fbddb1dc010ba4"
    case queueOverflow = "f1c8f05fa12d464b96786ec5bd78db51"
    case wakesRecovered = "46d20dab7df34e638dce119fed1f5666"
    case stateError = "4186c9efb27f47bb90a007455a3ad0b4"
    case outputSuppressed = "c9dda88d31d242beb08f3d2cd50538ba"
    case outputShed = "b7aefabfa53a4056885fb78ec2d0c228"
    case runProgress = "cb093f3c921649099142cad99993a6ba"
    case conditionsChanged = "ac346335927143759780cd30e9bcc7af"
    case runRequested = "81196e10e9334200ab13389f8581dc84"
    case systemSleeps = "510bad1e3ba244c1b7c37bb96e02db20"
    case systemResumed = "2529a30a642f41eaaad1ad649f091839"
    case runCgroups = "3b5900196c46407480b2b42c60bd71e8"
    case taskOverdue = "315230310a2646b7a9aec158e58be1fa"
    case taskFailing = "3904a312d5ea46489f97cf6bf33fc832"
    case taskRecovered = "d41f2525e8074f6990df56ddb055c140"
    case taskPaused = "8b8d0675948e42339320e30db5ca9217"
    case taskResumed = "31452ccdc2a642f89c47d2a096ed9dde"
    case drainStarted = "5f0eef66a92242d5a3d95aac81aaccd6"
    case drainEnded = "13f26e7abda74cd3a55a2734f4773de9"
    case upgradeStarted = "c694bc1019484565bce131fd9651dfb9"
    case upgraded = "8875834a913146d8a88831fb933ef752"
    case upgradeFailed = "9a3cac7638c448018f82167314b9a925"
    case runAdopted = "00e794f7c5364f18819656b7a9833d85"
    case runsResumed = "5505d9198da34b63bae876d3fc729ab6"
    case runsLost = "3e6355480e2a4a719f4b15eefbac31fe"
    case runsKept = "714d103c1a824a0680a48a51e9558755"
    case fleetUnavailable = "2efc36c882774b548f294bb05c45459f"
    case fleetTakeover = "24c6b926b28b42fea04c563bfdabd1c1"
    case fenceLost = "bf7ac27c33124f79850ed56bd18e2d12"
    case checkpoint = "518abd77c32e4a2bb059e12b0774aee6"
    case taskSubmitted = "93fefabbdd6f400792152eb59608e0df"
}

extension MessageID {
    /// The entries behind a `taskctl why` reason, if any journal entry tells of it.
    static func behind(_ code: WhyReason.Code) -> MessageID? {
        switch code {
        case .stopping: return .daemonStopping
        case .sleeping: return .systemSleeps
        case .draining: return .drainStarted
        case .paused: return .taskPaused
        case .running: return .runStarted
        case .waitingForConditions: return .conditionsChanged
        case .waitingForSlot, .waitingForGroup, .waitingForOrder, .queuedBehind: return .runQueued
        case .joinsRun, .replacesRun: return .coalesced
        case .skipsTrigger: return .triggerSkipped
        case .retryPending: return .retryScheduled
        case .overdue: return .taskOverdue
        case .failing: return .taskFailing
        case .lastRefusal: return .queueOverflow
        case .fleetUnavailable: return .fleetUnavailable
        case .nextTimer, .wakeOnly, .runsBeside, .lastResult, .failures, .fleet, .claimPending: return nil
        }
    }
}
