/// One calendar field's components, in order (`8,12..14/2`). A single component, the usual case,
/// is held inline rather than in an array: six fields of arrays cost six heap blocks per task.
public struct CalendarChain: RandomAccessCollection, Hashable, Sendable, ExpressibleByArrayLiteral {
    private enum Storage: Hashable, Sendable {
        case one(CalendarComponent)
        case many([CalendarComponent])
    }
    private let storage: Storage

    public init(_ components: [CalendarComponent]) {
        storage = components.count == 1 ? .one(components[0]) : .many(components)
    }

    public init(arrayLiteral components: CalendarComponent...) { self.init(components) }

    public var startIndex: Int { 0 }
    public var endIndex: Int {
        switch storage {
        case .one: return 1
        case .many(let components): return components.count
        }
    }

    public subscript(position: Int) -> CalendarComponent {
        switch storage {
        case .one(let component):
            precondition(position == 0, "CalendarChain index out of range")
            return component
        case .many(let components): return components[position]
        }
    }
}
