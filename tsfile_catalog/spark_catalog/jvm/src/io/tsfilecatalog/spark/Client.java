package io.tsfilecatalog.spark;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.spark.QueryContext;
import org.apache.spark.SparkException;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.catalyst.analysis.NamespaceAlreadyExistsException;
import org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.catalyst.analysis.NonEmptyNamespaceException;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.apache.spark.sql.connector.catalog.Identifier;
import py4j.Py4JException;
import scala.Option;

/**
 * Calls the Python {@link Delegate} with JSON and maps its errors onto Spark's exceptions.
 *
 * <p>The delegate is set by {@code tsfile_catalog.register(spark)} in a PySpark driver; a JVM
 * where no Python driver set one ({@code spark-sql}, a Spark Connect or Thrift server, a JVM
 * job) is answered by the Python process {@link CatalogProcess} starts.
 */
public final class Client {
  /** Reads the NaN and infinities Python's {@code json} writes (an aggregate's value). */
  static final ObjectMapper JSON =
      JsonMapper.builder().enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS).build();
  private static volatile Delegate delegate;
  /** SQLSTATE "syntax error or access rule violation": a refusal without a finer one. */
  static final String REFUSED_STATE = "42000";

  private Client() {}

  /** Called from Python by {@code tsfile_catalog.register(spark)}, in the driver. */
  public static void setDelegate(Delegate value) {
    delegate = value;
  }

  /**
   * Has the catalog process prepare the calling session now (its {@code tsfile} source, see
   * {@link CatalogProcess#delegate}), for what Spark looks up in the session without calling
   * the catalog; nothing when a driver's delegate answers. A process that cannot start is
   * reported by the catalog call that follows.
   */
  static void serveSession() {
    if (delegate == null) {
      try {
        CatalogProcess.delegate();
      } catch (RuntimeException e) {
        // The next catalog call starts the process again and fails with its error.
      }
    }
  }

  static ObjectNode object() {
    return JSON.createObjectNode();
  }

  static ArrayNode strings(String[] values) {
    ArrayNode out = JSON.createArrayNode();
    for (String value : values) {
      out.add(value);
    }
    return out;
  }

  static ObjectNode map(Map<String, String> values) {
    ObjectNode out = object();
    values.forEach(out::put);
    return out;
  }

  @SuppressWarnings("deprecation") // fields(): the one spelling every Jackson Spark 4 ships has
  static Map<String, String> toMap(JsonNode node) {
    Map<String, String> out = new LinkedHashMap<>();
    if (node != null) {
      node.fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
    }
    return out;
  }

  static ObjectNode identifier(String catalog, Identifier ident) {
    ObjectNode out = object();
    out.put("catalog", catalog);
    out.set("namespace", strings(ident.namespace()));
    out.put("name", ident.name());
    return out;
  }

  /** Calls {@code operation}; unchecked errors for anything the caller cannot declare. */
  static JsonNode call(String operation, ObjectNode request) {
    try {
      return callChecked(operation, request, null, null);
    } catch (NoSuchTableException
        | TableAlreadyExistsException
        | NoSuchNamespaceException
        | NamespaceAlreadyExistsException
        | NonEmptyNamespaceException e) {
      throw unchecked(e); // Spark's own, as it is (never raised without an identifier)
    }
  }

  /**
   * Calls {@code operation}; {@code ident} and {@code namespace} (either may be null) name
   * what Spark's "not found" and "already exists" exceptions report.
   */
  static JsonNode callChecked(
      String operation, ObjectNode request, Identifier ident, String[] namespace)
      throws NoSuchTableException,
          TableAlreadyExistsException,
          NoSuchNamespaceException,
          NamespaceAlreadyExistsException,
          NonEmptyNamespaceException {
    Delegate current = delegate;
    boolean ownProcess = current == null;
    if (ownProcess) {
      current = CatalogProcess.delegate();
    }
    JsonNode reply;
    try {
      reply = JSON.readTree(current.call(operation, JSON.writeValueAsString(request)));
      if (ownProcess) {
        CatalogProcess.called(); // closes the Py4J connections of ended threads
      }
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("tsfile catalog: invalid reply to " + operation, e);
    } catch (Py4JException e) {
      if (ownProcess) {
        throw CatalogProcess.failed(current, operation, e);
      }
      throw e;
    }
    JsonNode error = reply.get("error");
    if (error == null) {
      return reply.get("result");
    }
    String message = reply.path("message").asText();
    String[] space = namespace != null ? namespace : ident != null ? ident.namespace() : null;
    switch (error.asText()) {
      case "no_such_table":
        if (ident != null) {
          throw new NoSuchTableException(ident);
        }
        break;
      case "table_exists":
        if (ident != null) {
          throw new TableAlreadyExistsException(ident);
        }
        break;
      case "no_such_namespace":
        if (space != null) {
          throw new NoSuchNamespaceException(space);
        }
        break;
      case "namespace_exists":
        if (space != null) {
          throw new NamespaceAlreadyExistsException(space);
        }
        break;
      case "namespace_not_empty":
        if (space != null) {
          throw new NonEmptyNamespaceException(space);
        }
        break;
      case "internal":
        // A Python error that is no refusal of the catalog's (a defect): Spark's own kind for
        // one; the Python side logged its traceback.
        throw unchecked(SparkException.internalError("tsfile catalog: " + message));
      default:
        break;
    }
    // The Python message names the table, column or option at fault (as Catalog.sql's do);
    // its SQLSTATE is the Python error class's.
    throw refused(message, reply.path("sql_state").asText(REFUSED_STATE));
  }

  /**
   * The catalog's refusal of a statement ({@code message} names the table, column, option or
   * value at fault) as Spark's {@code AnalysisException} with SQLSTATE {@code sqlState}, no
   * error class and no cause: the kind of error that {@code spark-sql} (silent or not), {@code
   * beeline} and other JDBC/ODBC clients of the Thrift server, Spark Connect clients and
   * PySpark all print as its message alone, as they print Spark's own analysis errors ({@code
   * spark-sql} adds the Java stack trace to an error without a SQLSTATE or with an internal
   * one, {@code XX...}). Thrown as {@code throw Client.refused(...)}.
   */
  static RuntimeException refused(String message, String sqlState) {
    // The Scala constructor's defaults, spelled out: no line or position, no cause, no error
    // class, no parameters, no query context, no message template.
    throw unchecked(
        new AnalysisException(
            message,
            Option.empty(),
            Option.empty(),
            Option.empty(),
            Option.empty(),
            scala.collection.immutable.Map$.MODULE$.empty(),
            new QueryContext[0],
            Option.apply(sqlState),
            Option.empty()));
  }

  static RuntimeException refused(String message) {
    throw refused(message, REFUSED_STATE);
  }

  /**
   * Throws {@code error} from a method that cannot declare it. Spark's exceptions are Scala's
   * and so checked only in Java's eyes: Spark's own catalogs and rules throw them from any
   * method, as the plugin's must from the interfaces' methods that declare none.
   */
  @SuppressWarnings("unchecked")
  static <E extends Throwable> RuntimeException unchecked(Throwable error) throws E {
    throw (E) error;
  }

  static String[] toStrings(JsonNode array) {
    String[] out = new String[array.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = array.get(i).asText();
    }
    return out;
  }
}
