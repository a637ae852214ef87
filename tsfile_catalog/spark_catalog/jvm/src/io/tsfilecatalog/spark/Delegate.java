package io.tsfilecatalog.spark;

/**
 * The Python side of the catalog, implemented by {@code tsfile_catalog.spark_catalog.delegate}
 * and reached through a Py4J callback into the Python driver.
 *
 * <p>One entry point keeps this interface stable while operations are added: {@code operation}
 * names what is asked, {@code request} and the reply are JSON objects. A reply is either
 * {@code {"result": ...}} or {@code {"error": kind, "message": text}}, which {@link Client}
 * turns into Spark's own exceptions.
 */
public interface Delegate {
  String call(String operation, String request);
}
