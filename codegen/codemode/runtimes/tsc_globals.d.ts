// The global types TypeScript 7's tsc needs to exist when it compiles a run_code program
// without a library (--noLib): nothing is checked (--noCheck), so they can be empty.
interface Array<T> {}
interface Boolean {}
interface CallableFunction {}
interface Function {}
interface IArguments {}
interface NewableFunction {}
interface Number {}
interface Object {}
interface RegExp {}
interface String {}
