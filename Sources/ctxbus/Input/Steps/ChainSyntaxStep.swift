import ContextBusWire

/// A kind of step as the compact chain syntax spells it: one word, `NAME[:ARGUMENT][@MS]`.
///
/// Every kind of `ChainStep.kinds` conforms, in a file of its own here (`ReadStep+Syntax.swift`, …), next to the
/// wire's file for the kind; `ChainSyntax` reads and writes words through it, and `ctxbus device run --help` lists
/// its forms.
protocol ChainSyntaxStep: StepKind {
    /// The kind's forms (one per name: `write` and `write-command` are both `WriteStep`s).
    static var forms: [StepForm] { get }

    /// Reads a step of this kind from a word whose name is one of its forms'.
    ///
    /// - Throws: `ChainSyntax.WordError` pointing at the character at fault.
    init(word: StepWord) throws(ChainSyntax.WordError)

    /// The step's word, without its `@MS` timeout (`ChainSyntax.text(of:)` adds it).
    var word: String { get }
}

/// One form of a kind's word, for reading words (`name`) and for the help (`read:UUID[@MS]  read a characteristic`).
struct StepForm: Sendable {
    /// The word's name, before ':' or '@' (`read`).
    var name: String
    /// What may follow the name (`:UUID[@MS]`).
    var arguments: String
    /// What the step does, for the help.
    var meaning: String

    /// The whole form, as the help shows it (`read:UUID[@MS]`).
    var syntax: String { name + arguments }
}

extension ChainStep {
    /// The step as the compact syntax spells it.
    ///
    /// Every kind of step has a spelling (`ChainSyntaxTests` checks each kind of `ChainStep.kinds`): one that has
    /// none is a programmer error, and traps.
    var spelled: any ChainSyntaxStep {
        guard let spelled = kind as? any ChainSyntaxStep else {
            fatalError("ctxbus cannot spell '\(operation.rawValue)' steps: \(type(of: kind)) is not a ChainSyntaxStep")
        }
        return spelled
    }
}
