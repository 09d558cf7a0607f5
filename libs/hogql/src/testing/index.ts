export {
  generateExpression,
  generateHostileExpression,
  generatePropertyFilter,
  seededRandom,
} from './expression-generator.util';
